/*-------------------------------------------------------------------------
 *
 * types.c
 *	  The type table of the schema format: which PostgreSQL column types a
 *	  declared field type reads.  Domains are judged by their base type and
 *	  array columns by their element type (they become JSON arrays).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "binding/types.h"

/* The element type of an array column (its base type first), or the type. */
Oid
type_element(Oid column_type)
{
	Oid			base = getBaseType(column_type);
	Oid			element = get_element_type(base);

	return OidIsValid(element) ? getBaseType(element) : base;
}

/* text, varchar, char, name and the citext extension's type */
bool
type_is_text(Oid t)
{
	HeapTuple	tuple;
	bool		citext;

	if (t == TEXTOID || t == VARCHAROID || t == BPCHAROID || t == NAMEOID)
		return true;
	tuple = SearchSysCache1(TYPEOID, ObjectIdGetDatum(t));
	if (!HeapTupleIsValid(tuple))
		return false;
	citext = strcmp(NameStr(((Form_pg_type) GETSTRUCT(tuple))->typname), "citext") == 0;
	ReleaseSysCache(tuple);
	return citext;
}

bool
type_is_integer(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID;
}

bool
type_is_numeric(Oid t)
{
	return type_is_integer(t) || t == FLOAT4OID || t == FLOAT8OID ||
		t == NUMERICOID || t == CASHOID;
}

bool
type_is_json(Oid t)
{
	return t == JSONOID || t == JSONBOID;
}

/* Does a field of this type read a column of column_type? */
bool
type_accepts(ScalarType type, Oid column_type)
{
	Oid			t = type_element(column_type);

	switch (type)
	{
		case ST_TEXT:
		case ST_IDENTIFIER:
		case ST_KEYWORD:
			return type_is_text(t) || type_is_enum(t);
		case ST_ENUM:
			return type_is_text(t) || type_is_enum(t);
		case ST_UUID:
			return t == UUIDOID;
		case ST_BOOLEAN:
			return t == BOOLOID;
		case ST_SHORT:
			return t == INT2OID;
		case ST_INTEGER:
			return t == INT4OID;
		case ST_LONG:
			return t == INT8OID;
		case ST_FLOAT:
			return t == FLOAT4OID;
		case ST_DOUBLE:
			return t == FLOAT8OID;
		case ST_DECIMAL:
			return t == NUMERICOID || t == CASHOID;
		case ST_DATE:
			return t == DATEOID;
		case ST_TIMESTAMP:
			return t == TIMESTAMPOID || t == TIMESTAMPTZOID ||
				t == TIMEOID || t == TIMETZOID;
		case ST_BINARY:
			return t == BYTEAOID;
		case ST_JSON:
			return type_is_json(t);
	}
	return false;
}

/* "text, identifier, keyword, enum": the field types that read column_type */
char *
type_readers(Oid column_type)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = ST_TEXT; i <= ST_JSON; i++)
	{
		if (type_accepts((ScalarType) i, column_type))
			appendStringInfo(&buf, "%s%s", buf.len ? ", " : "",
							 schema_type_name((ScalarType) i));
	}
	return buf.len ? buf.data : NULL;
}

/*-------------------------------------------------------------------------
 *
 * build.c
 *	  Generates the statement that builds an index's documents for a set
 *	  of root keys: one jsonb_build_object per object, the values of its
 *	  columns, the root filters and soft_delete in the WHERE clause, so that
 *	  a key whose row is gone, filtered out or soft-deleted builds nothing
 *	  and becomes a delete.  Joins and aggregates are related.c's: derived
 *	  tables LEFT JOINed to the rows they belong to, read set-based.
 *
 * Every identifier is quoted and every name schema-qualified; every value
 * of the definition (filter values, defaults, constants) is a parameter,
 * cast to the column's own type.  Joins without an order are ordered by
 * the related table's primary key, and ties in order_by are broken by it,
 * so a document is the same every time it is built.  Values become JSON of
 * their type through jsonb_build_object, except bytea (base64) and money
 * (a number).  An object wider than jsonb_build_object's argument limit is
 * built in pieces joined with ||.
 *
 * The key arrays are the first parameters, one per key column, and the
 * definition's values follow, so every number is known as the statement
 * is generated, in one pass.  doc_query_param_types() and
 * doc_query_param_values() lay the parameters out for a caller, with room
 * for what it binds after them.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "document/build.h"
#include "document/build_internal.h"
#include "document/docid.h"
#include "document/lookup.h"
#include "document/raw_filter.h"

/* jsonb_build_object takes at most 100 arguments: 50 key/value pairs */
#define PAIRS_PER_CALL 50

char *
doc_param(BuildContext *cx, Oid type, Datum value)
{
	cx->param_types = lappend_oid(cx->param_types, type);
	cx->param_values = lappend(cx->param_values, (void *) value);
	return psprintf("$%d", cx->first_param + list_length(cx->param_types));
}

Table *
doc_open_table(BuildContext *cx, const char *nspname, const char *relname)
{
	Table	   *table = palloc0(sizeof(Table));

	table->relid = doc_table(nspname, relname);
	table->qualified = quote_qualified_identifier(nspname, relname);
	table->from = doc_rows_of(table->relid, table->qualified);
	table->number = cx->aliases++;
	table->alias = psprintf("t%d", table->number);
	initStringInfo(&table->joins);
	return table;
}

Oid
doc_column_type(const Table *table, const char *column)
{
	return get_atttype(table->relid, doc_column(table->relid, column));
}

/* The column's type as SQL, with its modifier: char(2), numeric(8,2). */
static char *
column_type_sql(const Table *table, const char *column)
{
	AttrNumber	attnum = get_attnum(table->relid, column);
	Oid			type;
	int32		typmod;
	Oid			collation;

	(void) doc_column_type(table, column);
	get_atttypetypmodcoll(table->relid, attnum, &type, &typmod, &collation);
	return format_type_extended(type, typmod,
								FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY);
}

char *
doc_column_ref(const Table *table, const char *column)
{
	return psprintf("%s.%s", table->alias, quote_identifier(column));
}

/* A definition value as a parameter cast to the column's type. */
static char *
typed_param(BuildContext *cx, const Table *table, const char *column, const char *value)
{
	return psprintf("%s::%s", doc_param(cx, TEXTOID, CStringGetTextDatum(value)),
					column_type_sql(table, column));
}

/*
 * A type's name for casting text to it, schema-qualified and without a
 * modifier: format_type_be_qualified() names bpchar "character", which as
 * a cast means character(1) and would cut keys and values to one letter.
 */
char *
doc_type_name(Oid type)
{
	return format_type_extended(type, -1, FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY);
}

/*
 * The primary key columns of relid (qualified names it in errors), from the
 * catalog; an error when it has none.
 */
ColumnList
doc_primary_key(Oid relid, const char *qualified)
{
	Relation	rel = table_open(relid, AccessShareLock);
	Bitmapset  *keys = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_PRIMARY_KEY);
	ColumnList	list = {0, NULL};
	int			i = -1;

	table_close(rel, AccessShareLock);
	list.columns = palloc(sizeof(char *) * Max(bms_num_members(keys), 1));
	while ((i = bms_next_member(keys, i)) >= 0)
		list.columns[list.ncolumns++] =
			get_attname(relid, i + FirstLowInvalidHeapAttributeNumber, false);
	if (list.ncolumns == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("table %s has no primary key", qualified),
				 errhint("Declare primary_key in the definition, or add a PRIMARY KEY.")));
	return list;
}

/* The single column a foreign key or junction points at. */
const char *
doc_single_key(const ColumnList *key, const Table *table)
{
	if (key->ncolumns != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("table %s has a composite key, which a foreign key cannot point at",
						table->qualified)));
	return key->columns[0];
}

void
doc_append_filters(BuildContext *cx, StringInfo where, const SchemaFilterList *filters,
			   const Table *table)
{
	static const char *const comparison[] = {
		[FILTER_EQ] = "OPERATOR(pg_catalog.=)",
		[FILTER_NEQ] = "OPERATOR(pg_catalog.<>)",
		[FILTER_LT] = "OPERATOR(pg_catalog.<)",
		[FILTER_LTE] = "OPERATOR(pg_catalog.<=)",
		[FILTER_GT] = "OPERATOR(pg_catalog.>)",
		[FILTER_GTE] = "OPERATOR(pg_catalog.>=)",
	};

	for (int i = 0; i < filters->nfilters; i++)
	{
		const SchemaFilter *f = &filters->filters[i];
		char	   *col = f->op == FILTER_RAW ? NULL : doc_column_ref(table, f->column);

		appendStringInfoString(where, " AND ");
		switch (f->op)
		{
			case FILTER_RAW:
				doc_check_raw_filter(f->raw, NULL);
				/* a line break ends a trailing -- comment inside */
				appendStringInfo(where, "(%s\n)", f->raw);
				break;
			case FILTER_IS_NULL:
				appendStringInfo(where, "%s IS NULL", col);
				break;
			case FILTER_IS_NOT_NULL:
				appendStringInfo(where, "%s IS NOT NULL", col);
				break;
			case FILTER_LIKE:
			case FILTER_ILIKE:
				appendStringInfo(where, "%s::pg_catalog.text %s %s", col,
								 f->op == FILTER_LIKE ? "OPERATOR(pg_catalog.~~)"
								 : "OPERATOR(pg_catalog.~~*)",
								 doc_param(cx, TEXTOID, CStringGetTextDatum(f->values[0])));
				break;
			case FILTER_IN:
			case FILTER_NOT_IN:
				{
					Datum	   *elems = palloc(sizeof(Datum) * Max(f->nvalues, 1));

					for (int v = 0; v < f->nvalues; v++)
						elems[v] = CStringGetTextDatum(f->values[v]);
					appendStringInfo(where, "%s%s OPERATOR(pg_catalog.=) ANY(%s::pg_catalog.text[]::%s[])",
									 f->op == FILTER_NOT_IN ? "NOT " : "", col,
									 doc_param(cx, TEXTARRAYOID,
											   PointerGetDatum(construct_array(elems, f->nvalues, TEXTOID,
																			   -1, false, TYPALIGN_INT))),
									 doc_type_name(doc_column_type(table, f->column)));
				}
				break;
			case FILTER_BETWEEN:
				appendStringInfo(where, "%s OPERATOR(pg_catalog.>=) %s AND %s OPERATOR(pg_catalog.<=) %s",
								 col, typed_param(cx, table, f->column, f->values[0]),
								 col, typed_param(cx, table, f->column, f->values[1]));
				break;
			default:
				appendStringInfo(where, "%s %s %s", col, comparison[f->op],
								 typed_param(cx, table, f->column, f->values[0]));
				break;
		}
	}
}

/*
 * JSON has no NaN and no infinity, and their text ("NaN", "infinity") is a
 * string where the mapping expects a number or a date: a float or numeric
 * NaN or infinity, and an infinite date or timestamp, become null, in
 * arrays too (array_replace keeps their shape).
 */
char *
doc_finite_expr(const char *expr, Oid type)
{
	static const char *const number_specials[] = {"NaN", "Infinity", "-Infinity"};
	static const char *const time_specials[] = {"infinity", "-infinity"};
	Oid			element = get_element_type(type);
	Oid			scalar = OidIsValid(element) ? element : type;
	const char *const *specials;
	int			nspecials;
	char	   *out = pstrdup(expr);

	switch (getBaseType(scalar))
	{
		case FLOAT4OID:
		case FLOAT8OID:
		case NUMERICOID:
			specials = number_specials;
			nspecials = lengthof(number_specials);
			break;
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			specials = time_specials;
			nspecials = lengthof(time_specials);
			break;
		default:
			return out;
	}
	for (int i = 0; i < nspecials; i++)
		out = psprintf(OidIsValid(element) ? "pg_catalog.array_replace(%s, '%s'::%s, NULL)"
					   : "NULLIF(%s, '%s'::%s)",
					   out, specials[i], doc_type_name(scalar));
	return out;
}

/* A column's value as it goes into the document. */
static char *
scalar_expr(BuildContext *cx, const SchemaField *field, const Table *table)
{
	char	   *expr = doc_column_ref(table, field->column);
	Oid			type = doc_column_type(table, field->column);

	for (int i = 0; i < field->ntransforms; i++)
		expr = psprintf(field->transforms[i] == TRANSFORM_LOWERCASE
						? "pg_catalog.lower(%s)" : "pg_catalog.btrim(%s)", expr);
	expr = doc_finite_expr(expr, type);
	if (field->default_value)
		expr = psprintf("COALESCE(%s, %s)", expr,
						typed_param(cx, table, field->column, field->default_value->str));
	if (type == BYTEAOID)
		expr = psprintf("pg_catalog.translate(pg_catalog.encode(%s, 'base64'), E'\\n', '')", expr);
	else if (type == CASHOID)
		expr = psprintf("%s::pg_catalog.numeric", expr);
	return expr;
}

static char *
geo_expr(const SchemaField *field, const Table *table)
{
	if (field->lat == NULL)
		return doc_column_ref(table, field->column);
	return psprintf("CASE WHEN %s IS NULL OR %s IS NULL THEN NULL "
					"ELSE pg_catalog.jsonb_build_object('lat', %s, 'lon', %s) END",
					doc_column_ref(table, field->lat), doc_column_ref(table, field->lon),
					doc_column_ref(table, field->lat), doc_column_ref(table, field->lon));
}

static char *
field_expr(BuildContext *cx, const SchemaField *field, Table *table,
		   const ColumnList *table_key)
{
	StringInfoData json;

	switch (field->kind)
	{
		case FIELD_SCALAR:
		case FIELD_CUSTOM:
			return scalar_expr(cx, field, table);
		case FIELD_MAP:
			return doc_column_ref(table, field->column);
		case FIELD_GEO:
			return geo_expr(field, table);
		case FIELD_OBJECT:
			return doc_object_expr(cx, &field->children, table, table_key);
		case FIELD_JOIN:
			return doc_join_expr(cx, field, table, table_key);
		case FIELD_AGGREGATE:
			return doc_aggregate_expr(cx, field, table, table_key);
		case FIELD_CONSTANT:
			initStringInfo(&json);
			schema_value_to_json(&json, field->value, true);
			return psprintf("%s::pg_catalog.jsonb",
							doc_param(cx, TEXTOID, CStringGetTextDatum(json.data)));
	}
	return NULL;
}

/*
 * pieces[lo..hi) joined with ||, as a balanced tree: a chain of thousands
 * of || would nest as deep, and the parser and executor recurse over it.
 */
static char *
concat_balanced(char **pieces, int lo, int hi)
{
	int			mid = lo + (hi - lo) / 2;

	if (hi - lo == 1)
		return pieces[lo];
	return psprintf("(%s OPERATOR(pg_catalog.||) %s)",
					concat_balanced(pieces, lo, mid), concat_balanced(pieces, mid, hi));
}

/* jsonb_build_object over the fields, in pieces of PAIRS_PER_CALL. */
char *
doc_object_expr(BuildContext *cx, const SchemaFieldList *fields, Table *table,
			const ColumnList *table_key)
{
	int			npieces = (fields->nfields + PAIRS_PER_CALL - 1) / PAIRS_PER_CALL;
	char	  **pieces;

	if (fields->nfields == 0)
		return pstrdup("'{}'::pg_catalog.jsonb");
	pieces = palloc(sizeof(char *) * npieces);
	for (int p = 0; p < npieces; p++)
	{
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfoString(&buf, "pg_catalog.jsonb_build_object(");
		for (int i = p * PAIRS_PER_CALL; i < Min(fields->nfields, (p + 1) * PAIRS_PER_CALL); i++)
		{
			const SchemaField *field = fields->fields[i];

			appendStringInfo(&buf, "%s%s, %s", i % PAIRS_PER_CALL ? ", " : "",
							 quote_literal_cstr(field->name),
							 field_expr(cx, field, table, table_key));
		}
		appendStringInfoChar(&buf, ')');
		pieces[p] = buf.data;
	}
	return concat_balanced(pieces, 0, npieces);
}


/*
 * The condition that picks the root rows of the keys in the key arrays,
 * bound from parameter key_param on: "= ANY" of the array for a single
 * key, which is also what the levels right under the root take their keys
 * from; row values against the unnested arrays for a composite key.
 */
static char *
root_key_match(Table *root, const ColumnList *key, int key_param)
{
	StringInfoData cols;
	StringInfoData arrays;

	if (key->ncolumns == 1)
	{
		root->key_column = key->columns[0];
		root->key_array = psprintf("$%d::pg_catalog.text[]::%s[]", key_param,
								   doc_type_name(doc_column_type(root, key->columns[0])));
		return psprintf("%s OPERATOR(pg_catalog.=) ANY(%s)",
						doc_column_ref(root, key->columns[0]), root->key_array);
	}
	initStringInfo(&cols);
	initStringInfo(&arrays);
	for (int i = 0; i < key->ncolumns; i++)
	{
		appendStringInfo(&cols, "%s%s", i ? ", " : "", doc_column_ref(root, key->columns[i]));
		appendStringInfo(&arrays, "%spg_catalog.unnest($%d::pg_catalog.text[]::%s[])",
						 i ? ", " : "", key_param + i,
						 doc_type_name(doc_column_type(root, key->columns[i])));
	}
	return psprintf("ROW(%s) OPERATOR(pg_catalog.=) ANY (SELECT * FROM ROWS FROM (%s))",
					cols.data, arrays.data);
}

/* The statement: the key arrays are $1 to $nkeys, the constants follow. */
DocumentQuery *
doc_build_query(const IndexSchema *schema)
{
	BuildContext cx = {0, NIL, NIL, 0, NIL, NIL};
	DocumentQuery *query = palloc0(sizeof(DocumentQuery));
	Table	   *root = doc_open_table(&cx, schema->namespace, schema->table);
	ColumnList	key = schema->primary_key.ncolumns > 0
		? schema->primary_key : doc_primary_key(root->relid, root->qualified);
	char	   *match = root_key_match(root, &key, 1);
	char	   *doc;
	StringInfoData where;
	StringInfoData with;
	char	  **key_refs;
	ListCell   *lc;
	int			n = 0;

	cx.first_param = key.ncolumns;
	root->rows = psprintf("FROM %s %s WHERE %s", root->from, root->alias, match);
	doc = doc_object_expr(&cx, &schema->fields, root, &key);
	initStringInfo(&where);
	doc_append_filters(&cx, &where, &schema->filters, root);
	if (schema->soft_delete)
	{
		const char *column = schema->soft_delete->column;
		StringInfoData when;

		for (int i = 0; column == NULL && i < schema->fields.nfields; i++)
		{
			if (strcmp(schema->fields.fields[i]->name, schema->soft_delete->field) == 0)
				column = schema->fields.fields[i]->column;
		}
		initStringInfo(&when);
		doc_append_filters(&cx, &when, &schema->soft_delete->when, root);
		appendStringInfo(&where, " AND NOT (%s %s%s)", doc_column_ref(root, column),
						 doc_column_type(root, column) == BOOLOID ? "IS TRUE" : "IS NOT NULL",
						 when.data);
	}
	initStringInfo(&with);
	foreach(lc, cx.levels)
		appendStringInfo(&with, "%s%s", with.len ? ", " : "WITH ", (char *) lfirst(lc));
	if (with.len)
		appendStringInfoChar(&with, ' ');

	query->nparams = list_length(cx.param_types);
	query->nkeys = key.ncolumns;
	query->key_columns = key.columns;
	query->key_types = palloc(sizeof(Oid) * Max(key.ncolumns, 1));
	query->root_relid = root->relid;
	query->root_qualified = root->qualified;
	query->root_from = root->from;
	key_refs = palloc(sizeof(char *) * Max(key.ncolumns, 1));
	for (int i = 0; i < key.ncolumns; i++)
	{
		query->key_types[i] = doc_column_type(root, key.columns[i]);
		key_refs[i] = doc_column_ref(root, key.columns[i]);
	}
	query->sql = psprintf("%sSELECT %s AS id, %s AS doc FROM %s %s%s WHERE %s%s",
						  with.data, doc_id_sql(key_refs, key.ncolumns), doc,
						  root->from, root->alias, root->joins.data, match, where.data);

	query->param_types = palloc(sizeof(Oid) * Max(query->nparams, 1));
	query->param_values = palloc(sizeof(Datum) * Max(query->nparams, 1));
	foreach(lc, cx.param_types)
		query->param_types[n++] = lfirst_oid(lc);
	n = 0;
	foreach(lc, cx.param_values)
		query->param_values[n++] = (Datum) lfirst(lc);
	return query;
}

/*
 * The types of q's parameters, in order: a text[] per key column, the
 * constants' types, then room for nextra more, which the caller fills.
 */
Oid *
doc_query_param_types(const DocumentQuery *q, int nextra)
{
	Oid		   *types = palloc(sizeof(Oid) * (q->nkeys + q->nparams + Max(nextra, 1)));

	for (int k = 0; k < q->nkeys; k++)
		types[k] = TEXTARRAYOID;
	memcpy(types + q->nkeys, q->param_types, sizeof(Oid) * q->nparams);
	return types;
}

/*
 * The values of q's parameters, in order: key_arrays (a text[] per key
 * column), the constants, then room for nextra more, which the caller
 * fills.
 */
Datum *
doc_query_param_values(const DocumentQuery *q, const Datum *key_arrays, int nextra)
{
	Datum	   *values = palloc(sizeof(Datum) * (q->nkeys + q->nparams + Max(nextra, 1)));

	memcpy(values, key_arrays, sizeof(Datum) * q->nkeys);
	memcpy(values + q->nkeys, q->param_values, sizeof(Datum) * q->nparams);
	return values;
}

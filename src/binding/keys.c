/*-------------------------------------------------------------------------
 *
 * keys.c
 *	  A declared primary_key names a document, so it must name at most one
 *	  row, and always one: its columns must be NOT NULL and cover a unique
 *	  index.  Otherwise two rows would write the same document (and a seed
 *	  fail with "ON CONFLICT DO UPDATE command cannot affect row a second
 *	  time"), and a row whose key is NULL would have no document id at all.
 *
 * The index must be valid, not partial and not on expressions; its key
 * columns must all be among the declared ones (a superset of a unique key
 * is unique too).  A deferrable unique index counts: duplicates it lets
 * in never outlive their transaction.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_index.h"
#include "lib/stringinfo.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "binding/keys.h"
#include "util/text_array.h"

/* Is index indexoid unique, valid, plain, and over some of columns only? */
static bool
index_covers(Oid relid, Oid indexoid, List *columns)
{
	HeapTuple	tuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	Form_pg_index index;
	bool		covers;

	if (!HeapTupleIsValid(tuple))
		return false;
	index = (Form_pg_index) GETSTRUCT(tuple);
	covers = index->indisunique && index->indisvalid && index->indislive &&
		heap_attisnull(tuple, Anum_pg_index_indpred, NULL) &&
		heap_attisnull(tuple, Anum_pg_index_indexprs, NULL);
	for (int i = 0; covers && i < index->indnkeyatts; i++)
	{
		AttrNumber	attnum = index->indkey.values[i];

		covers = attnum > 0 && string_list_member(columns, get_attname(relid, attnum, false));
	}
	ReleaseSysCache(tuple);
	return covers;
}

/*
 * NULL when columns (names) of relid are NOT NULL and cover a unique
 * index; otherwise the problem, in words.
 */
char *
key_uniqueness_problem(Oid relid, const char *display, List *columns)
{
	StringInfoData nullable;
	Relation	rel;
	List	   *indexes;
	ListCell   *lc;
	bool		unique = false;

	initStringInfo(&nullable);
	foreach(lc, columns)
	{
		AttrNumber	attnum = get_attnum(relid, lfirst(lc));
		HeapTuple	tuple;

		if (attnum == InvalidAttrNumber)
			continue;
		tuple = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(attnum));
		if (HeapTupleIsValid(tuple))
		{
			if (!((Form_pg_attribute) GETSTRUCT(tuple))->attnotnull)
				appendStringInfo(&nullable, "%s\"%s\"", nullable.len ? ", " : "",
								 (char *) lfirst(lc));
			ReleaseSysCache(tuple);
		}
	}
	if (nullable.len > 0)
		return psprintf("the primary key of table \"%s\" may be null: column %s is not NOT NULL",
						display, nullable.data);

	rel = table_open(relid, AccessShareLock);
	indexes = RelationGetIndexList(rel);
	table_close(rel, AccessShareLock);
	foreach(lc, indexes)
	{
		if (index_covers(relid, lfirst_oid(lc), columns))
		{
			unique = true;
			break;
		}
	}
	if (!unique)
		return psprintf("the primary key of table \"%s\" is not unique: no unique index covers only its columns",
						display);
	return NULL;
}

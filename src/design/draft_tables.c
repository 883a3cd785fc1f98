/*-------------------------------------------------------------------------
 *
 * draft_tables.c
 *	  What flusso_draft reads of the system catalogs: a table's columns, its primary
 *	  key, the foreign keys from and to it, and which tables are junctions.
 *	  Nothing here reads a row of a user table, and nothing here decides
 *	  what the draft says (draft.c does).
 *
 * Foreign keys are listed in the order of their names (then of their
 * table's), so that the same system catalogs always draft the same text.  Of the
 * constraints PostgreSQL clones onto partitions (conparentid set), only
 * those a referencing partition inherits are kept, as its own foreign keys
 * out of it: a partitioned table's constraint stands for the others, and a
 * partition is not told about the keys that point at its parent.
 *
 * A junction table, for a many_to_many guess, is one whose primary key is
 * exactly two columns, each the single column of a foreign key.  A table
 * with a key of its own and two foreign keys is left to has_many: its rows
 * are likely to be things in themselves (a loan, a review), not links.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "compat.h"
#include "design/draft_tables.h"
#include "util/spi_run.h"

/* The live columns of relid, in attnum order. */
List *
draft_columns(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	List	   *columns = NIL;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, i);
		DraftColumn *column;

		if (attr->attisdropped)
			continue;
		column = palloc(sizeof(DraftColumn));
		column->attnum = attr->attnum;
		column->name = pstrdup(NameStr(attr->attname));
		column->type = attr->atttypid;
		column->notnull = attr->attnotnull;
		columns = lappend(columns, column);
	}
	table_close(rel, AccessShareLock);
	return columns;
}

/* Is column attnum of relid NOT NULL? */
bool
draft_column_notnull(Oid relid, AttrNumber attnum)
{
	HeapTuple	tuple = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(attnum));
	bool		notnull;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for attribute %d of relation %u", attnum, relid);
	notnull = ((Form_pg_attribute) GETSTRUCT(tuple))->attnotnull;
	ReleaseSysCache(tuple);
	return notnull;
}

/* The columns of relid's primary key (attnums), in key order; NIL if none. */
List *
draft_primary_key(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	Oid			pkey = compat_primary_key_index(rel);
	List	   *key = NIL;
	HeapTuple	tuple;

	table_close(rel, AccessShareLock);
	if (!OidIsValid(pkey))
		return NIL;
	tuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(pkey));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for index %u", pkey);
	for (int i = 0; i < ((Form_pg_index) GETSTRUCT(tuple))->indnkeyatts; i++)
		key = lappend_int(key, ((Form_pg_index) GETSTRUCT(tuple))->indkey.values[i]);
	ReleaseSysCache(tuple);
	return key;
}

/* The column of relid's primary key when it has one column, or 0. */
AttrNumber
draft_single_key(Oid relid)
{
	List	   *key = draft_primary_key(relid);

	return list_length(key) == 1 ? (AttrNumber) linitial_int(key) : InvalidAttrNumber;
}

/*
 * Does a valid unique index (the primary key included) on exactly this
 * column, with no predicate, make it name at most one row?
 */
bool
draft_column_unique(Oid relid, AttrNumber attnum)
{
	Relation	rel = table_open(relid, AccessShareLock);
	List	   *indexes = RelationGetIndexList(rel);
	bool		unique = false;
	ListCell   *lc;

	table_close(rel, AccessShareLock);
	foreach(lc, indexes)
	{
		HeapTuple	tuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(lc)));
		Form_pg_index index;

		if (!HeapTupleIsValid(tuple))
			elog(ERROR, "cache lookup failed for index %u", lfirst_oid(lc));
		index = (Form_pg_index) GETSTRUCT(tuple);
		if (index->indisunique && index->indisvalid && index->indnkeyatts == 1 &&
			index->indkey.values[0] == attnum &&
			heap_attisnull(tuple, Anum_pg_index_indpred, NULL))
			unique = true;
		ReleaseSysCache(tuple);
		if (unique)
			break;
	}
	return unique;
}

/* A reader: one foreign key, appended to the List ** arg. */
static void
read_foreign_key(HeapTuple tuple, TupleDesc desc, void *arg)
{
	List	  **keys = arg;
	DraftForeignKey *key = palloc(sizeof(DraftForeignKey));
	bool		isnull;

	key->conoid = DatumGetObjectId(SPI_getbinval(tuple, desc, 1, &isnull));
	key->conname = TextDatumGetCString(SPI_getbinval(tuple, desc, 2, &isnull));
	key->from_relid = DatumGetObjectId(SPI_getbinval(tuple, desc, 3, &isnull));
	key->to_relid = DatumGetObjectId(SPI_getbinval(tuple, desc, 4, &isnull));
	key->ncolumns = DatumGetInt32(SPI_getbinval(tuple, desc, 5, &isnull));
	key->from_attnum = DatumGetInt16(SPI_getbinval(tuple, desc, 6, &isnull));
	key->to_attnum = DatumGetInt16(SPI_getbinval(tuple, desc, 7, &isnull));
	*keys = lappend(*keys, key);
}

/*
 * The foreign keys of relid (outgoing) or pointing at it (incoming), in
 * the order of their names, then of their tables' names.
 */
List *
draft_foreign_keys(Oid relid, bool incoming)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	List	   *keys = NIL;

	(void) spi_read(psprintf("SELECT c.oid, c.conname::pg_catalog.text, c.conrelid, c.confrelid, "
							 "pg_catalog.cardinality(c.conkey), c.conkey[1], c.confkey[1] "
							 "FROM pg_catalog.pg_constraint c "
							 "JOIN pg_catalog.pg_class r ON r.oid OPERATOR(pg_catalog.=) c.conrelid "
							 "JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) r.relnamespace "
							 "WHERE c.contype OPERATOR(pg_catalog.=) 'f' "
							 "AND c.%s OPERATOR(pg_catalog.=) $1 "
							 "AND (c.conparentid OPERATOR(pg_catalog.=) 0%s) "
							 "ORDER BY c.conname, n.nspname, r.relname, c.oid",
							 incoming ? "confrelid" : "conrelid",
							 incoming ? ""
							 : " OR c.confrelid OPERATOR(pg_catalog.=) (SELECT p.confrelid "
							 "FROM pg_catalog.pg_constraint p "
							 "WHERE p.oid OPERATOR(pg_catalog.=) c.conparentid)"),
					1, argtypes, values, true, 0, read_foreign_key, &keys);
	return keys;
}

/*
 * When near (a foreign key of a junction table) leads into a junction,
 * the junction's other foreign key, which leads out of it; NULL when the
 * table near starts from is no junction.
 */
DraftForeignKey *
draft_junction_far_key(const DraftForeignKey *near)
{
	List	   *key = draft_primary_key(near->from_relid);
	AttrNumber	other;
	ListCell   *lc;

	if (near->ncolumns != 1 || list_length(key) != 2)
		return NULL;
	if (linitial_int(key) == near->from_attnum)
		other = lsecond_int(key);
	else if (lsecond_int(key) == near->from_attnum)
		other = linitial_int(key);
	else
		return NULL;
	foreach(lc, draft_foreign_keys(near->from_relid, false))
	{
		DraftForeignKey *far = lfirst(lc);

		if (far->conoid != near->conoid && far->ncolumns == 1 && far->from_attnum == other)
			return far;
	}
	return NULL;
}

/* schema.table, quoted where it must be, for comments and messages */
char *
draft_table_display(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

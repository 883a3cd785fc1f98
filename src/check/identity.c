/*-------------------------------------------------------------------------
 *
 * identity.c
 *	  Replica identity analysis for flusso_check() and flusso_provision().
 *
 * With the default identity an UPDATE logs the old key only when the key
 * itself changes, and a DELETE logs only the key.  flusso needs the old
 * value of a child's foreign key to rebuild the parent it left, so such
 * tables need an identity that includes the foreign key: an index that
 * qualifies for REPLICA IDENTITY USING INDEX (unique, not partial, not
 * deferrable, no expressions, NOT NULL key columns) or FULL.
 *
 * A partitioned table logs nothing itself: each of its partitions logs its
 * own changes with its own identity (ALTER TABLE ... REPLICA IDENTITY on
 * the partitioned table does not reach them).  So a partitioned table's
 * identity is that of its partitions, and fixing it fixes each of them.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/syscache.h"

#include "check/identity.h"
#include "compat.h"

/* The partitions of partitioned table relid that hold rows. */
static List *
leaf_partitions(Oid relid)
{
	List	   *leaves = NIL;
	ListCell   *lc;

	foreach(lc, find_all_inheritors(relid, AccessShareLock, NULL))
	{
		char		relkind = get_rel_relkind(lfirst_oid(lc));

		if (relkind == RELKIND_RELATION)
			leaves = lappend_oid(leaves, lfirst_oid(lc));
	}
	return leaves;
}

/* A partitioned table's identity: usable, or full, when every partition's is. */
static void
partitioned_identity_of(Oid relid, TableIdentity *identity)
{
	ListCell   *lc;

	identity->usable = true;
	identity->full = true;
	foreach(lc, leaf_partitions(relid))
	{
		PartitionIdentity *partition = palloc0(sizeof(PartitionIdentity));

		partition->relid = lfirst_oid(lc);
		identity_of(partition->relid, &partition->identity);
		identity->usable &= partition->identity.usable;
		identity->full &= partition->identity.full;
		identity->partitions = lappend(identity->partitions, partition);
	}
}

void
identity_of(Oid relid, TableIdentity *identity)
{
	Relation	rel;
	Bitmapset  *offsets;
	int			i = -1;

	memset(identity, 0, sizeof(TableIdentity));
	if (get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
	{
		partitioned_identity_of(relid, identity);
		return;
	}
	rel = table_open(relid, AccessShareLock);
	if (rel->rd_rel->relreplident == REPLICA_IDENTITY_FULL)
	{
		identity->usable = true;
		identity->full = true;
	}
	else if (rel->rd_rel->relreplident != REPLICA_IDENTITY_NOTHING &&
			 OidIsValid(RelationGetReplicaIndex(rel)))
	{
		identity->usable = true;
		offsets = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_IDENTITY_KEY);
		while ((i = bms_next_member(offsets, i)) >= 0)
			identity->columns = bms_add_member(identity->columns,
											   i + FirstLowInvalidHeapAttributeNumber);
	}
	table_close(rel, AccessShareLock);
}

/* The names in columns that the identity does not log. */
List *
identity_missing(const TableIdentity *identity, Oid relid, List *columns)
{
	List	   *missing = NIL;
	ListCell   *lc;

	if (identity->full)
		return NIL;
	if (identity->partitions != NIL)
	{
		/* the columns some partition does not log; the names are alike */
		foreach(lc, identity->partitions)
		{
			PartitionIdentity *partition = lfirst(lc);

			missing = list_concat_unique(missing,
										 identity_missing(&partition->identity,
														  partition->relid, columns));
		}
		return missing;
	}
	foreach(lc, columns)
	{
		char	   *name = lfirst(lc);
		AttrNumber	attnum = get_attnum(relid, name);

		if (!identity->usable || !bms_is_member(attnum, identity->columns))
			missing = lappend(missing, name);
	}
	return missing;
}

static bool
attribute_not_null(Oid relid, AttrNumber attnum)
{
	HeapTuple	tuple = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid),
										Int16GetDatum(attnum));
	bool		notnull;

	if (!HeapTupleIsValid(tuple))
		return false;
	notnull = ((Form_pg_attribute) GETSTRUCT(tuple))->attnotnull;
	ReleaseSysCache(tuple);
	return notnull;
}

/*
 * Does the index qualify as a replica identity and cover the attributes?
 * Sets *width to its number of key columns.
 */
static bool
index_qualifies(Oid indexoid, Oid relid, Bitmapset *needed, int *width)
{
	HeapTuple	tuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	Form_pg_index index;
	Bitmapset  *keys = NULL;
	bool		ok;

	if (!HeapTupleIsValid(tuple))
		return false;
	index = (Form_pg_index) GETSTRUCT(tuple);
	ok = index->indisunique && index->indimmediate && index->indisvalid &&
		heap_attisnull(tuple, Anum_pg_index_indpred, NULL) &&
		heap_attisnull(tuple, Anum_pg_index_indexprs, NULL);
	for (int i = 0; ok && i < index->indnkeyatts; i++)
	{
		AttrNumber	attnum = index->indkey.values[i];

		ok = attnum > 0 && attribute_not_null(relid, attnum);
		keys = bms_add_member(keys, attnum);
	}
	ok = ok && bms_is_subset(needed, keys);
	*width = index->indnkeyatts;
	ReleaseSysCache(tuple);
	return ok;
}

static char *table_identity_fix_sql(Oid relid, List *columns);

/*
 * The statements that give relid a usable identity including columns: of
 * a partitioned table, one for each partition that lacks it.
 */
char *
identity_fix_sql(Oid relid, List *columns)
{
	StringInfoData sql;
	ListCell   *lc;

	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return table_identity_fix_sql(relid, columns);
	initStringInfo(&sql);
	foreach(lc, leaf_partitions(relid))
	{
		Oid			leaf = lfirst_oid(lc);
		TableIdentity identity;

		identity_of(leaf, &identity);
		if (identity.usable && identity_missing(&identity, leaf, columns) == NIL)
			continue;
		appendStringInfo(&sql, "%s%s", sql.len ? "; " : "",
						 table_identity_fix_sql(leaf, columns));
	}
	return sql.len ? sql.data : table_identity_fix_sql(relid, columns);
}

/*
 * The statement that gives relid a usable identity including columns:
 * DEFAULT when the primary key covers them, USING INDEX over the narrowest
 * qualifying unique index, FULL otherwise.
 */
static char *
table_identity_fix_sql(Oid relid, List *columns)
{
	Relation	rel = table_open(relid, AccessShareLock);
	char	   *table = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
												   RelationGetRelationName(rel));
	Bitmapset  *needed = NULL;
	Oid			best = InvalidOid;
	int			best_width = INT_MAX;
	ListCell   *lc;
	char	   *sql;
	Oid			pkey = compat_primary_key_index(rel);

	foreach(lc, columns)
		needed = bms_add_member(needed, get_attnum(relid, (char *) lfirst(lc)));

	foreach(lc, RelationGetIndexList(rel))
	{
		Oid			indexoid = lfirst_oid(lc);
		int			width;

		if (index_qualifies(indexoid, relid, needed, &width) &&
			(width < best_width || (width == best_width && indexoid == pkey)))
		{
			best = indexoid;
			best_width = width;
		}
	}

	if (OidIsValid(best) && best == pkey)
		sql = psprintf("ALTER TABLE %s REPLICA IDENTITY DEFAULT", table);
	else if (OidIsValid(best))
		sql = psprintf("ALTER TABLE %s REPLICA IDENTITY USING INDEX %s", table,
					   quote_identifier(get_rel_name(best)));
	else
		sql = psprintf("ALTER TABLE %s REPLICA IDENTITY FULL", table);
	table_close(rel, AccessShareLock);
	return sql;
}

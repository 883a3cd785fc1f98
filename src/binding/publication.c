/*-------------------------------------------------------------------------
 *
 * publication.c
 *	  Reads the flusso publication from the system catalogs through the
 *	  pg_publication_tables view, which already resolves FOR ALL TABLES,
 *	  TABLES IN SCHEMA and partitions into the tables actually published
 *	  (a partitioned table as itself or as its partitions, as
 *	  publish_via_partition_root says).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "binding/publication.h"
#include "util/spi_run.h"

static void
load_actions(PublicationState *state, HeapTuple tuple, TupleDesc desc)
{
	static const char *const actions[] = {"insert", "update", "delete", "truncate"};
	StringInfoData missing;
	bool		isnull;

	initStringInfo(&missing);
	for (int i = 0; i < lengthof(actions); i++)
	{
		if (!DatumGetBool(SPI_getbinval(tuple, desc, 4 + i, &isnull)))
			appendStringInfo(&missing, "%s%s", missing.len ? ", " : "", actions[i]);
	}
	state->missing_actions = missing.len ? missing.data : NULL;
}

/* A reader: the publication's row, into the PublicationState arg. */
static void
read_publication(HeapTuple tuple, TupleDesc desc, void *arg)
{
	PublicationState *state = arg;
	bool		isnull;

	state->exists = true;
	state->oid = DatumGetObjectId(SPI_getbinval(tuple, desc, 1, &isnull));
	state->owner = DatumGetObjectId(SPI_getbinval(tuple, desc, 2, &isnull));
	state->all_tables = DatumGetBool(SPI_getbinval(tuple, desc, 3, &isnull));
	state->via_root = DatumGetBool(SPI_getbinval(tuple, desc, 8, &isnull));
	load_actions(state, tuple, desc);
}

/* A reader: one table the publication publishes, added to the state arg. */
static void
read_published_table(HeapTuple tuple, TupleDesc desc, void *arg)
{
	PublicationState *state = arg;
	PublishedTable *table = palloc0(sizeof(PublishedTable));
	bool		isnull;
	Datum		attnames;
	Datum		rowfilter;

	table->relid = DatumGetObjectId(SPI_getbinval(tuple, desc, 1, &isnull));
	attnames = SPI_getbinval(tuple, desc, 2, &isnull);
	if (!isnull)
	{
		Datum	   *elems;
		int			nelems;

		deconstruct_array(DatumGetArrayTypeP(attnames), TEXTOID, -1, false,
						  TYPALIGN_INT, &elems, NULL, &nelems);
		for (int e = 0; e < nelems; e++)
			table->columns = lappend(table->columns, TextDatumGetCString(elems[e]));
	}
	rowfilter = SPI_getbinval(tuple, desc, 3, &isnull);
	if (!isnull)
		table->rowfilter = TextDatumGetCString(rowfilter);
	state->tables = lappend(state->tables, table);
}

/*
 * Load the state of publication name; the caller's memory context keeps it.
 * Not read-only, so that a publication flusso_provision() has just created
 * or altered is seen.
 */
void
publication_load(const char *name, PublicationState *state)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};

	memset(state, 0, sizeof(PublicationState));
	state->name = pstrdup(name);
	(void) spi_read("SELECT oid, pubowner, puballtables, pubinsert, pubupdate, "
					"pubdelete, pubtruncate, pubviaroot FROM pg_catalog.pg_publication "
					"WHERE pubname OPERATOR(pg_catalog.=) $1",
					1, argtypes, values, false, 1, read_publication, state);
	if (state->exists)
		(void) spi_read("SELECT c.oid, t.attnames::pg_catalog.text[], t.rowfilter "
						"FROM " PUBLICATION_TABLES_FROM "WHERE t.pubname OPERATOR(pg_catalog.=) $1",
						1, argtypes, values, false, 0, read_published_table, state);
}

static PublishedTable *
listed(const PublicationState *state, Oid relid)
{
	ListCell   *lc;

	foreach(lc, state->tables)
	{
		PublishedTable *table = lfirst(lc);

		if (table->relid == relid)
			return table;
	}
	return NULL;
}

/*
 * How the publication publishes relid, or NULL when it does not.  A
 * partitioned table is listed itself, or through its root (with
 * publish_via_partition_root), or as its partitions (without): then it is
 * published when every partition is, as the one of them that publishes
 * least (a row filter, or the fewest columns).
 */
PublishedTable *
publication_find(const PublicationState *state, Oid relid)
{
	PublishedTable *found = listed(state, relid);
	PublishedTable *least = NULL;
	ListCell   *lc;

	if (found)
		return found;
	if (get_rel_relispartition(relid))
	{
		foreach(lc, get_partition_ancestors(relid))
		{
			if ((found = listed(state, lfirst_oid(lc))) != NULL)
				return found;
		}
	}
	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return NULL;
	foreach(lc, find_all_inheritors(relid, AccessShareLock, NULL))
	{
		Oid			partition = lfirst_oid(lc);

		if (get_rel_relkind(partition) == RELKIND_PARTITIONED_TABLE)
			continue;
		if ((found = listed(state, partition)) == NULL)
			return NULL;
		if (least == NULL || found->rowfilter ||
			(least->rowfilter == NULL &&
			 list_length(found->columns) < list_length(least->columns)))
			least = found;
	}
	return least;
}

/* The names in columns that the publication does not publish. */
List *
publication_unpublished_columns(const PublishedTable *published, List *columns)
{
	List	   *missing = NIL;
	ListCell   *lc;

	foreach(lc, columns)
	{
		ListCell   *pc;
		bool		found = false;

		foreach(pc, published->columns)
		{
			if (strcmp(lfirst(pc), lfirst(lc)) == 0)
				found = true;
		}
		if (!found)
			missing = lappend(missing, lfirst(lc));
	}
	return missing;
}

/*
 * A table as ALTER PUBLICATION ... ADD TABLE names it (qualified, quoted):
 * ONLY when other tables inherit from it, not as partitions, since flusso
 * reads the table's own rows only, and publishing its children would make
 * their UPDATE and DELETE fail when they have no replica identity.
 */
char *
publication_table_sql(Oid relid, const char *qualified)
{
	if (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE && has_subclass(relid))
		return psprintf("ONLY %s", qualified);
	return pstrdup(qualified);
}

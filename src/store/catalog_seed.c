/*-------------------------------------------------------------------------
 *
 * catalog_seed.c
 *	  flusso.seed, the cursors of seeds in progress: every statement over
 *	  the table, each written once, as a verb.
 *
 * The seed (snapshot/seed.c) starts, saves and reads its row; whoever
 * abandons a seed, forgets it.  Each verb runs in the caller's role and
 * transaction, in a SPI connection of its own; what it returns is
 * allocated in the caller's memory context.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "util/text_array.h"
#include "store/catalog_seed.h"
#include "store/store_spi.h"

/* A text[] column of the first SPI row, as n strings, or NULL. */
static char **
text_array_column(int column, int n)
{
	bool		isnull;
	Datum		value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, column, &isnull);

	return isnull ? NULL : text_array_to_strings(value, n);
}

/*
 * The saved seed of index name at this version, its keys in context;
 * false when there is none.
 */
bool
catalog_read_seed(const char *name, const char *version, int nkeys,
				  MemoryContext context, SeedRow *row)
{
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(name), CStringGetTextDatum(version)};
	bool		isnull;
	bool		found;

	SPI_connect();
	if (SPI_execute_with_args("SELECT last_key, max_key, done, total FROM flusso.seed "
							  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
							  "AND version OPERATOR(pg_catalog.=) $2",
							  2, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read flusso.seed");
	found = SPI_processed > 0;
	if (found)
	{
		MemoryContext old = MemoryContextSwitchTo(context);

		row->last_key = text_array_column(1, nkeys);
		row->max_key = text_array_column(2, nkeys);
		MemoryContextSwitchTo(old);
		row->done = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
		row->total = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4, &isnull));
	}
	SPI_finish();
	return found;
}

/* A seed of index name begins (again): its row, from the start. */
void
catalog_start_seed(const char *name, const char *version,
				   char **max_key, int nkeys, int64 total)
{
	Oid			argtypes[4] = {TEXTOID, TEXTOID, TEXTARRAYOID, INT8OID};
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};

	values[0] = CStringGetTextDatum(name);
	values[1] = CStringGetTextDatum(version);
	values[2] = max_key ? text_array_from_strings(max_key, nkeys) : (Datum) 0;
	nulls[2] = max_key ? ' ' : 'n';
	values[3] = Int64GetDatum(total);
	SPI_connect();
	if (SPI_execute_with_args("INSERT INTO flusso.seed (index_name, version, max_key, total) "
							  "VALUES ($1, $2, $3, $4) ON CONFLICT (index_name) DO UPDATE SET "
							  "version = $2, last_key = NULL, max_key = $3, done = 0, total = $4, "
							  "started_at = pg_catalog.clock_timestamp(), "
							  "updated_at = pg_catalog.clock_timestamp()",
							  4, argtypes, values, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the seed of index \"%s\"", name);
	SPI_finish();
}

/* Save the cursor of the seed of index name: the last key read, the count. */
void
catalog_save_seed(const char *name, char **last_key, int nkeys, int64 done)
{
	Oid			argtypes[3] = {TEXTOID, TEXTARRAYOID, INT8OID};
	Datum		values[3];
	char		nulls[3] = {' ', ' ', ' '};

	values[0] = CStringGetTextDatum(name);
	values[1] = last_key ? text_array_from_strings(last_key, nkeys) : (Datum) 0;
	nulls[1] = last_key ? ' ' : 'n';
	values[2] = Int64GetDatum(done);
	SPI_connect();
	if (SPI_execute_with_args("UPDATE flusso.seed SET last_key = $2, done = $3, "
							  "updated_at = pg_catalog.clock_timestamp() "
							  "WHERE index_name OPERATOR(pg_catalog.=) $1",
							  3, argtypes, values, nulls, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not save the seed cursor of index \"%s\"", name);
	SPI_finish();
}

/* The names of the indexes with a seed of their current version saved. */
List *
catalog_resumable_seeds(void)
{
	MemoryContext caller = CurrentMemoryContext;
	List	   *names = NIL;

	SPI_connect();
	if (SPI_execute("SELECT s.index_name FROM flusso.seed s JOIN flusso.index i "
					"ON i.name OPERATOR(pg_catalog.=) s.index_name "
					"AND i.version OPERATOR(pg_catalog.=) s.version", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read flusso.seed");
	names = store_text_column(caller);
	SPI_finish();
	return names;
}

/* Forget the seed cursor of index name: a seed of it starts from scratch. */
void
catalog_forget_seed(const char *name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};

	SPI_connect();
	if (SPI_execute_with_args("DELETE FROM flusso.seed WHERE index_name OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not forget the seed of index \"%s\"", name);
	SPI_finish();
}

/* Forget every seed cursor. */
void
catalog_forget_all_seeds(void)
{
	SPI_connect();
	if (SPI_execute("DELETE FROM flusso.seed", false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not forget the seeds");
	SPI_finish();
}

/*-------------------------------------------------------------------------
 *
 * catalog_seed.c
 *	  flusso.seed, the cursors of seeds in progress: every statement over
 *	  the table, each written once, as a verb.
 *
 * The seed (engine/seed.c) starts, saves and reads its row; whoever
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
#include "utils/memutils.h"

#include "store/catalog_seed.h"
#include "util/text_array.h"
#include "util/spi_run.h"

/* A text[] column of a row, as n strings, or NULL. */
static char **
text_array_column(HeapTuple tuple, TupleDesc desc, int column, int n)
{
	bool		isnull;
	Datum		value = SPI_getbinval(tuple, desc, column, &isnull);

	return isnull ? NULL : text_array_to_strings(value, n);
}

typedef struct SeedRead
{
	SeedRow    *row;
	int			nkeys;
	MemoryContext context;		/* where the keys go */
} SeedRead;

static void
read_seed(HeapTuple tuple, TupleDesc desc, void *arg)
{
	SeedRead   *read = arg;
	MemoryContext old = MemoryContextSwitchTo(read->context);
	bool		isnull;

	read->row->last_key = text_array_column(tuple, desc, 1, read->nkeys);
	read->row->max_key = text_array_column(tuple, desc, 2, read->nkeys);
	MemoryContextSwitchTo(old);
	read->row->done = DatumGetInt64(SPI_getbinval(tuple, desc, 3, &isnull));
	read->row->total = DatumGetInt64(SPI_getbinval(tuple, desc, 4, &isnull));
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
	SeedRead	read = {row, nkeys, context};

	return spi_read("SELECT last_key, max_key, done, total FROM flusso.seed "
					  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
					  "AND version OPERATOR(pg_catalog.=) $2",
					  2, argtypes, values, true, 1, read_seed, &read) > 0;
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
	(void) spi_run_nulls("INSERT INTO flusso.seed (index_name, version, max_key, total) "
						   "VALUES ($1, $2, $3, $4) ON CONFLICT (index_name) DO UPDATE SET "
						   "version = $2, last_key = NULL, max_key = $3, done = 0, total = $4, "
						   "started_at = pg_catalog.clock_timestamp(), "
						   "updated_at = pg_catalog.clock_timestamp()",
						   4, argtypes, values, nulls, SPI_OK_INSERT);
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
	(void) spi_run_nulls("UPDATE flusso.seed SET last_key = $2, done = $3, "
						   "updated_at = pg_catalog.clock_timestamp() "
						   "WHERE index_name OPERATOR(pg_catalog.=) $1",
						   3, argtypes, values, nulls, SPI_OK_UPDATE);
}

/* The names of the indexes with a seed of their current version saved. */
List *
catalog_resumable_seeds(void)
{
	return spi_read_texts("SELECT s.index_name FROM flusso.seed s JOIN flusso.index i "
							"ON i.name OPERATOR(pg_catalog.=) s.index_name "
							"AND i.version OPERATOR(pg_catalog.=) s.version", 0, NULL, NULL);
}

/* Forget the seed cursor of index name: a seed of it starts from scratch. */
void
catalog_forget_seed(const char *name)
{
	(void) spi_run_text("DELETE FROM flusso.seed WHERE index_name OPERATOR(pg_catalog.=) $1",
						  name, NULL, SPI_OK_DELETE);
}

/* Forget every seed cursor. */
void
catalog_forget_all_seeds(void)
{
	(void) spi_run("DELETE FROM flusso.seed", 0, NULL, NULL, SPI_OK_DELETE);
}

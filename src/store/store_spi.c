/*-------------------------------------------------------------------------
 *
 * store_spi.c
 *	  What the store's verbs share of SPI: one statement run, or its rows
 *	  read, in a connection of its own, planned once per process, failing
 *	  loudly when it does not do what it should, what is read copied out
 *	  of SPI's memory before SPI_finish() frees it; and plans that use the
 *	  indexes of the tables the shipper reads and writes a bulk at a time.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/memutils.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "store/store_spi.h"
#include "util/spi_cache.h"

/*
 * Run sql with its parameters (nulls as SPI_execute_with_args takes them,
 * or NULL when none is), read-write, in an SPI connection of its own,
 * planned once per process (util/spi_cache.c); an error unless SPI
 * answers expected.  The rows it processed.
 */
uint64
store_run_nulls(const char *sql, int nargs, Oid *types, Datum *values, const char *nulls,
				int expected)
{
	uint64		processed;

	SPI_connect();
	if (spi_execute_cached(sql, nargs, types, values, nulls, false, 0) != expected)
		elog(ERROR, "could not run \"%s\"", sql);
	processed = SPI_processed;
	SPI_finish();
	return processed;
}

uint64
store_run(const char *sql, int nargs, Oid *types, Datum *values, int expected)
{
	return store_run_nulls(sql, nargs, types, values, NULL, expected);
}

/* store_run() with $1, and $2 unless arg2 is NULL, as text. */
uint64
store_run_text(const char *sql, const char *arg1, const char *arg2, int expected)
{
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(arg1),
	arg2 ? CStringGetTextDatum(arg2) : (Datum) 0};

	return store_run(sql, arg2 ? 2 : 1, types, values, expected);
}

/*
 * Read the rows of sql with its parameters (a SELECT, or a statement
 * RETURNING rows), at most limit (0: all), in an SPI connection of its
 * own: read_only in the caller's snapshot, or else after its own changes,
 * as a statement that locks or writes the rows it reads must be.  reader is called for each row, in order, with the caller's memory
 * context current, so that what it keeps outlives the connection.  How
 * many rows there were.
 */
uint64
store_read(const char *sql, int nargs, Oid *types, Datum *values, bool read_only,
		   long limit, StoreRowReader reader, void *arg)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext spi;
	uint64		processed;

	SPI_connect();
	switch (spi_execute_cached(sql, nargs, types, values, NULL, read_only, limit))
	{
		case SPI_OK_SELECT:
		case SPI_OK_INSERT_RETURNING:
		case SPI_OK_UPDATE_RETURNING:
		case SPI_OK_DELETE_RETURNING:
			break;
		default:
			elog(ERROR, "could not run \"%s\"", sql);
	}
	processed = SPI_processed;
	spi = MemoryContextSwitchTo(caller);
	for (uint64 i = 0; reader != NULL && i < processed; i++)
		reader(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, arg);
	MemoryContextSwitchTo(spi);
	SPI_finish();
	return processed;
}

/* A reader: the text of the row's first column, appended to *(List **) arg. */
void
store_read_text(HeapTuple tuple, TupleDesc desc, void *arg)
{
	List	  **texts = arg;

	*texts = lappend(*texts, SPI_getvalue(tuple, desc, 1));
}

/* The text of the first column of every row of sql, in order (read-only). */
List *
store_read_texts(const char *sql, int nargs, Oid *types, Datum *values)
{
	List	   *texts = NIL;

	(void) store_read(sql, nargs, types, values, true, 0, store_read_text, &texts);
	return texts;
}

static void
read_int64(HeapTuple tuple, TupleDesc desc, void *arg)
{
	bool		isnull;
	Datum		value = SPI_getbinval(tuple, desc, 1, &isnull);

	*(int64 *) arg = isnull ? 0 : DatumGetInt64(value);
}

/* The int8 of the first column of sql's first row, 0 if none (read-only). */
int64
store_read_int64(const char *sql, int nargs, Oid *types, Datum *values)
{
	int64		value = 0;

	(void) store_read(sql, nargs, types, values, true, 1, read_int64, &value);
	return value;
}

/*
 * Plan the next statements with the tables' indexes alone, until
 * store_index_paths_end().  The shipper's tables (the outbox, the digests
 * of what OpenSearch holds) swing from empty to a seed's every document
 * and back faster than autovacuum's statistics follow them: left to its
 * estimates, the planner read the oldest 1,000 of 200,000 outbox rows
 * never analyzed by sorting them all (56 ms a bulk), and deleted 1,000
 * shipped rows by hashing the whole table, so each bulk cost more the more
 * was queued.  The settings are saved at a GUC nest level of their own, as
 * PostgreSQL's RI_Initial_Check sets work_mem for its one query.
 */
int
store_index_paths_begin(void)
{
	static const char *const plan_types[] = {
		"enable_seqscan", "enable_bitmapscan", "enable_sort",
		"enable_hashjoin", "enable_mergejoin", "enable_material",
	};
	int			level = NewGUCNestLevel();

	for (int i = 0; i < lengthof(plan_types); i++)
		(void) set_config_option(plan_types[i], "off", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	return level;
}

void
store_index_paths_end(int level)
{
	AtEOXact_GUC(true, level);
}

/*-------------------------------------------------------------------------
 *
 * spi_run.c
 *	  One statement of a fixed text run, or its rows read, in an SPI
 *	  connection of its own, planned once per process (spi_cache.c),
 *	  failing loudly when it does not do what it should, what is read
 *	  copied out of SPI's memory before SPI_finish() frees it.  The
 *	  store's verbs run every statement so; a statement whose text is
 *	  built from names runs through SPI itself, unplanned.
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

#include "util/spi_cache.h"
#include "util/spi_run.h"

/*
 * Run sql with its parameters (nulls as SPI_execute_with_args takes them,
 * or NULL when none is), read-write, in an SPI connection of its own,
 * planned once per process (util/spi_cache.c); an error unless SPI
 * answers expected.  The rows it processed.
 */
uint64
spi_run_nulls(const char *sql, int nargs, Oid *types, Datum *values, const char *nulls,
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
spi_run(const char *sql, int nargs, Oid *types, Datum *values, int expected)
{
	return spi_run_nulls(sql, nargs, types, values, NULL, expected);
}

/* spi_run() with $1, and $2 unless arg2 is NULL, as text. */
uint64
spi_run_text(const char *sql, const char *arg1, const char *arg2, int expected)
{
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(arg1),
	arg2 ? CStringGetTextDatum(arg2) : (Datum) 0};

	return spi_run(sql, arg2 ? 2 : 1, types, values, expected);
}

/*
 * Read the rows of sql with its parameters (a SELECT, or a statement
 * RETURNING rows), at most limit (0: all), in an SPI connection of its
 * own: read_only in the caller's snapshot, or else after its own changes,
 * as a statement that locks or writes the rows it reads must be.  reader
 * is called for each row, in order, with the caller's memory context
 * current, so that what it keeps outlives the connection.  How many rows
 * there were.
 */
uint64
spi_read(const char *sql, int nargs, Oid *types, Datum *values, bool read_only,
		   long limit, SpiRowReader reader, void *arg)
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
spi_read_text(HeapTuple tuple, TupleDesc desc, void *arg)
{
	List	  **texts = arg;

	*texts = lappend(*texts, SPI_getvalue(tuple, desc, 1));
}

/* The text of the first column of every row of sql, in order (read-only). */
List *
spi_read_texts(const char *sql, int nargs, Oid *types, Datum *values)
{
	List	   *texts = NIL;

	(void) spi_read(sql, nargs, types, values, true, 0, spi_read_text, &texts);
	return texts;
}

/* A reader: the oid of the row's first column, appended to *(List **) arg. */
void
spi_read_oid(HeapTuple tuple, TupleDesc desc, void *arg)
{
	List	  **oids = arg;
	bool		isnull;

	*oids = lappend_oid(*oids, DatumGetObjectId(SPI_getbinval(tuple, desc, 1, &isnull)));
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
spi_read_int64(const char *sql, int nargs, Oid *types, Datum *values)
{
	int64		value = 0;

	(void) spi_read(sql, nargs, types, values, true, 1, read_int64, &value);
	return value;
}

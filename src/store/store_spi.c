/*-------------------------------------------------------------------------
 *
 * store_spi.c
 *	  What the store's verbs share of SPI: one statement run in a
 *	  connection of its own, which fails loudly when it does not do what
 *	  it should, and the text of one column of a result, copied out of
 *	  SPI's memory before SPI_finish() frees it.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"

#include "store/store_spi.h"
#include "util/spi_cache.h"

/*
 * Run sql with its parameters, read-write, in an SPI connection of its
 * own; an error unless SPI answers expected.  The rows it processed.
 */
uint64
store_run(const char *sql, int nargs, Oid *types, Datum *values, int expected)
{
	uint64		processed;

	SPI_connect();
	if (spi_execute_cached(sql, nargs, types, values, NULL, false, 0) != expected)
		elog(ERROR, "could not run \"%s\"", sql);
	processed = SPI_processed;
	SPI_finish();
	return processed;
}

/*
 * The text of the first column of every row of SPI_tuptable, in order,
 * allocated in context; call before SPI_finish().
 */
List *
store_text_column(MemoryContext context)
{
	MemoryContext spi = MemoryContextSwitchTo(context);
	List	   *values = NIL;

	for (uint64 i = 0; i < SPI_processed; i++)
		values = lappend(values, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
	MemoryContextSwitchTo(spi);
	return values;
}

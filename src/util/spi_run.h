/*-------------------------------------------------------------------------
 *
 * spi_run.h
 *	  One statement run, or its rows read, in an SPI connection of its own
 *	  (spi_run.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_UTIL_SPI_RUN_H
#define FLUSSO_UTIL_SPI_RUN_H

#include "nodes/pg_list.h"

#include "access/htup.h"
#include "access/tupdesc.h"

/* what is kept of a row read: in the caller's memory context */
typedef void (*SpiRowReader) (HeapTuple tuple, TupleDesc desc, void *arg);

extern uint64 spi_run(const char *sql, int nargs, Oid *types, Datum *values, int expected);
extern uint64 spi_run_text(const char *sql, const char *arg1, const char *arg2,
						   int expected);
extern uint64 spi_run_nulls(const char *sql, int nargs, Oid *types, Datum *values,
							const char *nulls, int expected);
extern uint64 spi_read(const char *sql, int nargs, Oid *types, Datum *values,
					   bool read_only, long limit, SpiRowReader reader, void *arg);
extern void spi_read_text(HeapTuple tuple, TupleDesc desc, void *arg);
extern void spi_read_oid(HeapTuple tuple, TupleDesc desc, void *arg);
extern List *spi_read_texts(const char *sql, int nargs, Oid *types, Datum *values);
extern int64 spi_read_int64(const char *sql, int nargs, Oid *types, Datum *values);

#endif							/* FLUSSO_UTIL_SPI_RUN_H */

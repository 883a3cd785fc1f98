/*-------------------------------------------------------------------------
 *
 * store_spi.h
 *	  What the store's verbs share of SPI: running one statement, reading
 *	  its rows, planning with indexes alone.  Private to store/.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_STORE_SPI_H
#define FLUSSO_STORE_STORE_SPI_H

#include "nodes/pg_list.h"

#include "access/htup.h"
#include "access/tupdesc.h"

/* what is kept of a row read: in the caller's memory context */
typedef void (*StoreRowReader) (HeapTuple tuple, TupleDesc desc, void *arg);

extern uint64 store_run(const char *sql, int nargs, Oid *types, Datum *values, int expected);
extern uint64 store_run_text(const char *sql, const char *arg1, const char *arg2,
							 int expected);
extern uint64 store_run_nulls(const char *sql, int nargs, Oid *types, Datum *values,
							  const char *nulls, int expected);
extern uint64 store_read(const char *sql, int nargs, Oid *types, Datum *values,
						 bool read_only, long limit, StoreRowReader reader, void *arg);
extern void store_read_text(HeapTuple tuple, TupleDesc desc, void *arg);
extern List *store_read_texts(const char *sql, int nargs, Oid *types, Datum *values);
extern int64 store_read_int64(const char *sql, int nargs, Oid *types, Datum *values);
extern int	store_index_paths_begin(void);
extern void store_index_paths_end(int level);

#endif							/* FLUSSO_STORE_STORE_SPI_H */

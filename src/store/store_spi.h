/*-------------------------------------------------------------------------
 *
 * store_spi.h
 *	  What the store's verbs share of SPI: running one statement, reading
 *	  one column of its rows, planning with indexes alone.  Private to
 *	  store/.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_STORE_SPI_H
#define FLUSSO_STORE_STORE_SPI_H

#include "nodes/pg_list.h"

extern uint64 store_run(const char *sql, int nargs, Oid *types, Datum *values, int expected);
extern List *store_text_column(MemoryContext context);
extern int	store_index_paths_begin(void);
extern void store_index_paths_end(int level);

#endif							/* FLUSSO_STORE_STORE_SPI_H */

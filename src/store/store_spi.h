/*-------------------------------------------------------------------------
 *
 * store_spi.h
 *	  What the store's verbs share of SPI: running one statement and
 *	  reading one column of its rows.  Private to store/.
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

#endif							/* FLUSSO_STORE_STORE_SPI_H */

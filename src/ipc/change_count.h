/*-------------------------------------------------------------------------
 *
 * change_count.h
 *	  A count that grows whenever what a flusso process keeps of flusso's
 *	  catalog, or of PostgreSQL's system catalogs, may have changed (see
 *	  change_count.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_IPC_CHANGE_COUNT_H
#define FLUSSO_IPC_CHANGE_COUNT_H

#include "ipc/shared.h"

extern void change_count_watch(const int *caches, int ncaches);
extern uint64 change_count(DatabaseEntry *entry);

#endif							/* FLUSSO_IPC_CHANGE_COUNT_H */

/*-------------------------------------------------------------------------
 *
 * catalog_changes.h
 *	  A count that grows whenever the catalog a flusso process keeps may
 *	  have changed (see catalog_changes.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_IPC_CATALOG_CHANGES_H
#define FLUSSO_IPC_CATALOG_CHANGES_H

#include "ipc/shared.h"

extern void catalog_changes_watch(const int *caches, int ncaches);
extern uint64 catalog_changes_count(DatabaseEntry *entry);

#endif							/* FLUSSO_IPC_CATALOG_CHANGES_H */

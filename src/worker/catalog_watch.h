/*-------------------------------------------------------------------------
 *
 * catalog_watch.h
 *	  Tells the worker when what it reads of flusso's catalog, or of the
 *	  system catalogs, may have changed.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_WORKER_CATALOG_WATCH_H
#define FLUSSO_WORKER_CATALOG_WATCH_H

#include "ipc/shared.h"

/* What the worker saw when it last read the catalog. */
typedef struct CatalogWatch
{
	uint64		seen;			/* changes counted then */
	TimestampTz seen_at;
} CatalogWatch;

extern void catalog_watch_start(void);
extern void catalog_watch_reset(CatalogWatch *watch, DatabaseEntry *entry);
extern bool catalog_watch_due(CatalogWatch *watch, DatabaseEntry *entry);

#endif							/* FLUSSO_WORKER_CATALOG_WATCH_H */

/*-------------------------------------------------------------------------
 *
 * change_count.c
 *	  The one count by which the worker (worker/catalog_watch.c) and the
 *	  shipper (shipper/ship_catalog.c) learn that what they keep of
 *	  flusso's catalog, or of PostgreSQL's system catalogs, may have
 *	  changed.
 *
 * It adds two counts.  Changes of flusso's own tables are counted in the
 * database's shared memory by the transactions that commit them
 * (ipc/requests.c), after they are visible.  Changes of the system
 * catalogs come as invalidation messages, counted here by callbacks: a
 * relcache one for every change of a table, its columns or privileges,
 * and those of the syscaches the process names.  Another backend's
 * messages reach this process when it reads the shared invalidation
 * queue, which change_count() does, at the cost of testing a flag
 * when it is empty; a process that fell too far behind gets a reset,
 * which calls every callback.  More counts than changes cost a catalog
 * read each.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/inval.h"

#include "ipc/change_count.h"

/*
 * Invalidations seen by this process.  A file variable, not a process's
 * state: callbacks can run as the process exits, after its frame is gone.
 */
static uint64 invalidations = 0;

static void
count_relation(Datum arg, Oid relid)
{
	invalidations++;
}

static void
count_syscache(Datum arg, int cacheid, uint32 hashvalue)
{
	invalidations++;
}

/* Count invalidations from now on, of relations and of caches; once per process. */
void
change_count_watch(const int *caches, int ncaches)
{
	CacheRegisterRelcacheCallback(count_relation, (Datum) 0);
	for (int i = 0; i < ncaches; i++)
		CacheRegisterSyscacheCallback(caches[i], count_syscache, (Datum) 0);
}

/*
 * The invalidations received so far, plus the changes of flusso's tables
 * committed in entry's database.
 */
uint64
change_count(DatabaseEntry *entry)
{
	uint64		committed;

	AcceptInvalidationMessages();
	LWLockAcquire(flusso_shared->lock, LW_SHARED);
	committed = entry->table_changes;
	LWLockRelease(flusso_shared->lock);
	return invalidations + committed;
}

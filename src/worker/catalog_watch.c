/*-------------------------------------------------------------------------
 *
 * catalog_watch.c
 *	  Tells the worker when what it reads of flusso's catalog or of the
 *	  system catalogs may have changed, so that an idle worker reads it
 *	  only then, not on a timer.
 *
 * What the worker waits for changes in two ways.  flusso's own tables
 * (flusso.index, flusso.sink, the generations) change through flusso's SQL
 * functions and flusso's own processes, which count the change in the
 * database's shared memory and set the worker's latch when they commit
 * (ipc/requests.c).  PostgreSQL's
 * catalogs (a publication that comes to cover a table, a table or column
 * that is back, a privilege granted, a documents table dropped or given
 * to another owner) change through DDL, which sends invalidation messages
 * when it commits, after the change is visible; ipc/change_count.c
 * counts them.  A relcache invalidation comes with every change of a
 * table, of its columns or privileges, and of a publication's tables; the
 * syscaches cover what does not send one: publications, schemas, role
 * memberships, functions and types.  More counts than changes cost only
 * a catalog look each.
 *
 * Another backend's invalidations reach this process only when it reads
 * the shared invalidation queue, which it does when it starts a
 * transaction or calls AcceptInvalidationMessages(), and no latch is set
 * for them.  So catalog_watch_due() reads the queue, which costs a test
 * of a flag when it is empty; the worker calls it on every turn of its
 * loop, which the WAL polling wakes anyway.  Outside a transaction the
 * messages only mark cache entries invalid, as logical decoding has them
 * do (ReorderBufferImmediateInvalidation), and a process that fell too far
 * behind gets a reset, which calls every callback.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "ipc/change_count.h"
#include "worker/catalog_watch.h"

/*
 * The catalog is read at most once a second, however often it changes:
 * DDL that comes in a stream (temporary tables made and dropped all day)
 * costs no more than reading it every second did.
 */
#define CATALOG_LOOK_MIN_MS 1000

/* Count invalidations from now on; once per process. */
void
catalog_watch_start(void)
{
	static const int caches[] = {
		PUBLICATIONOID, PUBLICATIONRELMAP, PUBLICATIONNAMESPACEMAP,
		NAMESPACEOID, AUTHMEMMEMROLE, PROCOID, TYPEOID
	};

	change_count_watch(caches, lengthof(caches));
}

/* The catalog is being read now: changes counted so far are seen. */
void
catalog_watch_reset(CatalogWatch *watch, DatabaseEntry *entry)
{
	watch->seen = change_count(entry);
	watch->seen_at = GetCurrentTimestamp();
}

/*
 * May the catalog have changed since it was last read, and may it be read
 * again already?  If so, the caller reads it now.
 */
bool
catalog_watch_due(CatalogWatch *watch, DatabaseEntry *entry)
{
	uint64		now_seen = change_count(entry);
	TimestampTz now;

	if (now_seen == watch->seen)
		return false;
	now = GetCurrentTimestamp();
	if (!TimestampDifferenceExceeds(watch->seen_at, now, CATALOG_LOOK_MIN_MS))
		return false;
	watch->seen = now_seen;
	watch->seen_at = now;
	return true;
}

/*-------------------------------------------------------------------------
 *
 * ship_watch.c
 *	  Tells the shipper when what it keeps of the catalog (ship_catalog.c)
 *	  may have changed.
 *
 * The count it returns grows whenever that may be so, in two ways, as the
 * worker's does (worker/catalog_watch.c).  flusso's own tables change
 * through flusso's SQL functions, the worker's sink verbs (a generation
 * begun, seeded, truncated or retired, shipping resumed) and the owners
 * it follows, and each such commit is counted in the database's shared
 * memory (ipc/requests.c), after it is visible.  PostgreSQL's catalogs
 * change through DDL, whose invalidation messages ipc/catalog_changes.c
 * counts: a relcache one for every change of a table, its columns or its
 * privileges; and the syscaches of what the shipper reads besides: the
 * foreign servers, their wrappers and user mappings (a server's options,
 * its credentials, USAGE granted or revoked), roles and memberships, and
 * the schemas, functions and types a build statement names.  More counts
 * than changes cost one catalog read each; the shipper's own steps
 * neither send invalidations nor need to, for it drops what it keeps
 * itself (ship_catalog_forget()).
 *
 * Another backend's invalidations reach this process when it reads the
 * shared invalidation queue: ship_watch_count() reads it, which costs the
 * test of a flag when it is empty.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/syscache.h"

#include "ipc/catalog_changes.h"
#include "shipper/shipper.h"

/* Count invalidations from now on; once per process. */
void
ship_watch_start(void)
{
	static const int caches[] = {
		FOREIGNSERVEROID, FOREIGNDATAWRAPPEROID, USERMAPPINGOID,
		USERMAPPINGUSERSERVER, AUTHOID, AUTHMEMMEMROLE,
		NAMESPACEOID, PROCOID, TYPEOID
	};

	catalog_changes_watch(caches, lengthof(caches));
}

/*
 * A number that grows whenever what the shipper keeps may have changed:
 * the invalidations received so far, and the changes of flusso's tables
 * committed in entry's database.
 */
uint64
ship_watch_count(DatabaseEntry *entry)
{
	return catalog_changes_count(entry);
}

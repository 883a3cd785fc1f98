/*-------------------------------------------------------------------------
 *
 * probe.c
 *	  The "flusso probe" background worker: does a database have flusso
 *	  and an index?  The launcher cannot read other databases' catalogs,
 *	  so after a restart it sends a probe into each database that allows
 *	  connections; the probe connects, looks, records the answer in shared
 *	  memory and exits.  Only a database that has flusso gets an entry
 *	  there; one that finds none free is refused, and says so in the log
 *	  (its flusso_status() says so too).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "util/pinned.h"
#include "util/xact.h"
#include "ipc/shared.h"
#include "store/catalog_index.h"
#include "worker/worker.h"

/* Entry point of "flusso probe"; arg is the database's OID. */
void
flusso_probe_main(Datum arg)
{
	Oid			dboid = DatumGetObjectId(arg);
	DatabaseEntry *entry;
	bool		wanted = false;
	bool		has_extension;
	char	   *database;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	pinned_settings_for_process();
	(void) xact_begin(false, NULL, 0);
	/* for the WARNING below, after the transaction */
	database = MemoryContextStrdup(TopMemoryContext, get_database_name(MyDatabaseId));
	has_extension = OidIsValid(get_extension_oid("flusso", true));
	if (has_extension)
	{
		wanted = catalog_has_indexes();
	}
	xact_commit();

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry = shared_database(dboid, has_extension);
	if (entry)
	{
		/* without flusso, the launcher frees the entry */
		entry->wanted = wanted;
		entry->has_extension = has_extension;
		entry->probed_at = GetCurrentTimestamp();
	}
	LWLockRelease(flusso_shared->lock);
	if (has_extension && entry == NULL)
		shared_warn_no_entry(database);
	shared_wake_launcher();
	proc_exit(0);
}

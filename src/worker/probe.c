/*-------------------------------------------------------------------------
 *
 * probe.c
 *	  The "flusso probe" background worker: does a database have flusso
 *	  and an index?  The launcher cannot read other databases' catalogs,
 *	  so after a restart it sends a probe into each database that allows
 *	  connections; the probe connects, looks, records the answer in shared
 *	  memory and exits.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/timestamp.h"

#include "common/pinned.h"
#include "common/xact.h"
#include "common/shared.h"
#include "worker/worker.h"

/* Entry point of "flusso probe"; arg is the database's entry index. */
void
flusso_probe_main(Datum arg)
{
	DatabaseEntry *entry = &flusso_shared->databases[DatumGetInt32(arg)];
	bool		wanted = false;
	bool		has_extension;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry->probe = false;
	entry->probed_at = GetCurrentTimestamp();
	LWLockRelease(flusso_shared->lock);

	BackgroundWorkerInitializeConnectionByOid(entry->dboid, InvalidOid, 0);
	pinned_settings_for_process();
	(void) xact_begin(false, NULL, 0);
	has_extension = OidIsValid(get_extension_oid("flusso", true));
	if (has_extension)
	{
		SPI_connect();
		if (SPI_execute("SELECT 1 FROM flusso.index", true, 1) == SPI_OK_SELECT)
			wanted = SPI_processed > 0;
		SPI_finish();
	}
	xact_commit();

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry->wanted = wanted;
	entry->has_extension = has_extension;
	LWLockRelease(flusso_shared->lock);
	shared_wake_launcher();
	proc_exit(0);
}

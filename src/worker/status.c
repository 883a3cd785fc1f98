/*-------------------------------------------------------------------------
 *
 * status.c
 *	  flusso_status(): one row per index of this database, from the catalog
 *	  (so that a new index shows at once), with its phase and the
 *	  database-wide figures of the worker from shared memory.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "replication/slot.h"
#include "utils/builtins.h"
#include "utils/pg_lsn.h"
#include "utils/timestamp.h"

#include "flusso.h"
#include "index/access.h"
#include "index/definition.h"
#include "common/shared.h"

PG_FUNCTION_INFO_V1(flusso_status);

#define STATUS_COLUMNS 14

/* The slot's confirmed position, or InvalidXLogRecPtr without a slot. */
static XLogRecPtr
slot_confirmed(const char *slot_name)
{
	ReplicationSlot *slot;
	XLogRecPtr	confirmed = InvalidXLogRecPtr;

	LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
	slot = SearchNamedReplicationSlot(slot_name, false);
	if (slot)
	{
		SpinLockAcquire(&slot->mutex);
		confirmed = slot->data.confirmed_flush;
		SpinLockRelease(&slot->mutex);
	}
	LWLockRelease(ReplicationSlotControlLock);
	return confirmed;
}

Datum
flusso_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *slot_name = psprintf(FLUSSO_SLOT_FORMAT, MyDatabaseId);
	XLogRecPtr	confirmed = slot_confirmed(slot_name);
	XLogRecPtr	flushed = GetFlushRecPtr(NULL);
	DatabaseEntry copy;
	bool		have_entry = false;
	ListCell   *lc;

	flusso_require_admin();
	InitMaterializedSRF(fcinfo, 0);

	memset(&copy, 0, sizeof(copy));
	if (flusso_shared)
	{
		DatabaseEntry *entry;

		LWLockAcquire(flusso_shared->lock, LW_SHARED);
		entry = shared_database(MyDatabaseId, false);
		if (entry)
		{
			memcpy(&copy, entry, sizeof(copy));
			have_entry = true;
		}
		LWLockRelease(flusso_shared->lock);
	}

	foreach(lc, index_load_names())
	{
		const char *name = lfirst(lc);
		IndexStatus *status = NULL;
		Datum		values[STATUS_COLUMNS];
		bool		nulls[STATUS_COLUMNS];

		memset(nulls, 0, sizeof(nulls));
		for (int i = 0; have_entry && i < copy.nindexes; i++)
		{
			if (strcmp(copy.indexes[i].name, name) == 0)
				status = &copy.indexes[i];
		}

		values[0] = CStringGetTextDatum(name);
		/* without a worker, nothing is kept up to date */
		values[1] = CStringGetTextDatum(phase_name(copy.no_worker_slot && copy.worker_pid == 0
												   ? PHASE_ERROR
												   : status ? status->phase : PHASE_IDLE));
		values[2] = Int64GetDatum(status ? status->snapshot_done : 0);
		values[3] = Int64GetDatum(status ? status->snapshot_total : 0);
		values[4] = Int32GetDatum(copy.worker_pid);
		nulls[4] = copy.worker_pid == 0;
		values[5] = CStringGetTextDatum(slot_name);
		values[6] = LSNGetDatum(confirmed);
		nulls[6] = XLogRecPtrIsInvalid(confirmed);
		values[7] = Int64GetDatum(flushed > confirmed ? (int64) (flushed - confirmed) : 0);
		nulls[7] = XLogRecPtrIsInvalid(confirmed);
		values[8] = Float8GetDatum(copy.oldest_unapplied == 0 ? 0.0 :
								   (double) (GetCurrentTimestamp() - copy.oldest_unapplied) / USECS_PER_SEC);
		values[9] = Int64GetDatum(copy.changes_captured);
		values[10] = Int64GetDatum(copy.documents_written);
		values[11] = Int64GetDatum(copy.batches);
		if (status && status->error[0])
			values[12] = CStringGetTextDatum(status->error);
		else if (copy.last_error[0])
			values[12] = CStringGetTextDatum(copy.last_error);
		else
			nulls[12] = true;
		values[13] = TimestampTzGetDatum(copy.last_error_at);
		nulls[13] = copy.last_error_at == 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

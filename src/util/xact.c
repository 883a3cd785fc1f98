/*-------------------------------------------------------------------------
 *
 * xact.c
 *	  The one way flusso's background workers open and close a transaction:
 *	  its start reported (so pg_stat_activity.xact_start tells how long it
 *	  has been open), a snapshot active while it runs.
 *
 * Memory: while the transaction runs, its own context is current, as
 * PostgreSQL leaves it, so that what a statement allocates without naming
 * a context dies with the transaction; what must outlive it is allocated
 * in a context its caller passes in.  xact_commit() returns to the context
 * xact_begin() was called in: PostgreSQL leaves TopMemoryContext current,
 * and a caller that switched "back" by hand would depend on where it had
 * been, while one that did not would allocate into memory that lives
 * forever, or that the next commit frees.
 *
 * A transaction that reads or writes flusso's tables share-locks the
 * extension first, so that a concurrent DROP EXTENSION, which locks the
 * extension before anything else, waits for it instead of deadlocking
 * with it; when the extension is gone meanwhile, no transaction is left
 * open and the caller is told, to return to its loop, which decides what
 * to do.  A transaction about to read what other transactions committed
 * waits for them to leave the proc array before it takes its snapshot: a
 * commit is decoded before it is visible.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "replication/slot.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/sinval.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/snapmgr.h"

#include "util/xact.h"

/* the context xact_begin() was called in, current again after xact_commit() */
static MemoryContext caller_context = NULL;

/* the decoding flag was set, and is to be set again after the transaction */
static bool decoding_flag_cleared = false;

/* decoding ran since the last transaction began: the caches hold the past */
static bool caches_from_history = false;

/* the reader has processed every WAL record before this position */
static XLogRecPtr decoded_upto = InvalidXLogRecPtr;

/* SharedInvalidMessageCounter when last looked at */
static uint64 invalidations_seen = 0;

/* every invalidation this process took in came from a commit before this */
static XLogRecPtr absorbed_before = InvalidXLogRecPtr;

/*
 * Decoding looks the system catalogs up as they were when each change was
 * made, and leaves what it read in this process's caches.  An entry so
 * built is stale only if a later system catalog change's invalidation had
 * been taken in before it was built, for nothing invalidates it again,
 * until the reader replays that change's commit, which executes its
 * invalidations (ReorderBufferExecuteInvalidations): a relation's entry may
 * then name a file a later TRUNCATE replaced.  So the next transaction
 * starts from clean caches unless the reader has passed every commit whose
 * invalidations this process took in: each time the count of those moves,
 * the WAL insert position then bounds them.  In a steady stream of row
 * changes no invalidation arrives and the caches are kept, which saves a
 * fifth of a busy worker's time; any DDL costs a reset or a few.
 *
 * The worker's reader calls this for every transaction the reorder buffer
 * replayed, with the end of the record it processed (cdc/decode.c).
 */
void
xact_note_decoding(XLogRecPtr upto)
{
	caches_from_history = true;
	decoded_upto = Max(decoded_upto, upto);
}

/* Bound the commits of the invalidations taken in since the last look. */
static void
note_invalidations(void)
{
	if (SharedInvalidMessageCounter != invalidations_seen)
	{
		invalidations_seen = SharedInvalidMessageCounter;
		absorbed_before = GetXLogInsertRecPtr();
	}
}

/*
 * Start from clean caches if decoding may have left stale entries: it ran,
 * and the reader has not passed every commit whose invalidations this
 * process took in (see xact_note_decoding).
 */
static void
clean_caches(void)
{
	note_invalidations();
	if (caches_from_history && decoded_upto < absorbed_before)
	{
		InvalidateSystemCaches();
		note_invalidations();
	}
	caches_from_history = false;
}

/* Set or clear this process's PROC_IN_LOGICAL_DECODING. */
static void
set_decoding_flag(bool on)
{
	LWLockAcquire(ProcArrayLock, LW_EXCLUSIVE);
	if (on)
		MyProc->statusFlags |= PROC_IN_LOGICAL_DECODING;
	else
		MyProc->statusFlags &= ~PROC_IN_LOGICAL_DECODING;
	ProcGlobal->statusFlags[MyProc->pgxactoff] = MyProc->statusFlags;
	LWLockRelease(ProcArrayLock);
}

/* Outside a transaction: its own transaction is seen as it is by others. */
static void
leave_decoding(void)
{
	if (MyProc->statusFlags & PROC_IN_LOGICAL_DECODING)
	{
		set_decoding_flag(false);
		decoding_flag_cleared = true;
	}
}

/* The transaction ended: the process decodes again, if it still holds its slot. */
static void
resume_decoding(void)
{
	if (decoding_flag_cleared && MyReplicationSlot != NULL)
		set_decoding_flag(true);
	decoding_flag_cleared = false;
}

/*
 * Share-lock the extension, and say whether it is still there once locked.
 * Its OID is looked up by name only when none is known or the known one
 * is gone (dropped, perhaps created again under another): a lookup by
 * name is a catalog scan, and the worker and the shipper begin many
 * transactions a second.
 */
static bool
share_lock_extension(void)
{
	static Oid	extension = InvalidOid;

	for (;;)
	{
		bool		known = OidIsValid(extension);

		if (!known)
			extension = get_extension_oid("flusso", true);
		if (!OidIsValid(extension))
			return false;
		LockDatabaseObject(ExtensionRelationId, extension, 0, AccessShareLock);
		if (get_extension_name(extension) != NULL)
			return true;
		extension = InvalidOid;
		if (!known)
			return false;
	}
}

/*
 * Start a transaction with a snapshot; its memory context is current until
 * xact_commit().  With lock_extension, false (and no transaction, in the
 * caller's memory context) when the extension was dropped.  The snapshot
 * is taken once the nwait transactions of wait_for have ended.
 */
bool
xact_begin(bool lock_extension, const TransactionId *wait_for, int nwait)
{
	Assert(!IsTransactionState());
	caller_context = CurrentMemoryContext;
	leave_decoding();
	SetCurrentStatementStartTimestamp();
	note_invalidations();
	StartTransactionCommand();
	clean_caches();
	if (lock_extension && !share_lock_extension())
	{
		AbortCurrentTransaction();
		resume_decoding();
		MemoryContextSwitchTo(caller_context);
		return false;
	}
	for (int i = 0; i < nwait; i++)
		XactLockTableWait(wait_for[i], NULL, NULL, XLTW_None);
	PushActiveSnapshot(GetTransactionSnapshot());
	return true;
}

/*
 * Commit the transaction xact_begin() started, and return in the memory
 * context it was called in.
 */
void
xact_commit(void)
{
	PopActiveSnapshot();
	CommitTransactionCommand();
	resume_decoding();
	MemoryContextSwitchTo(caller_context);
}

/*
 * The same, without waiting for the WAL flush whatever synchronous_commit
 * says: for a transaction whose loss in a crash is no worse than a crash
 * just before it, such as the shipper's record of a bulk that went (lost,
 * its rows are shipped again, as after any crash before the record).
 */
void
xact_commit_unflushed(void)
{
	(void) set_config_option("synchronous_commit", "off", PGC_SUSET, PGC_S_SESSION,
							 GUC_ACTION_LOCAL, true, 0, false);
	xact_commit();
}

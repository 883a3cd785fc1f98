/*-------------------------------------------------------------------------
 *
 * hooks.c
 *	  How SQL sessions tell the launcher and the workers what changed:
 *	  an index defined, the last index or the extension dropped, the
 *	  database dropped.
 *
 * Requests made inside a transaction are carried out when it commits (an
 * aborted CREATE or DROP changes nothing).  DROP DATABASE is different: it
 * refuses while a logical slot of the database is active, and it checks
 * that before it could commit.  So the drop hook asks the worker to release
 * its slot and exit at once, terminates it if it is busy (in a long
 * statement, waiting for a consistent point or for a lock), and waits until
 * the slot is free; the slot itself stays, and DROP DATABASE removes it
 * with the database.  Should the drop fail anyway, the launcher starts the
 * worker again and nothing was lost.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_database.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "replication/slot.h"
#include "storage/spin.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "flusso.h"
#include "index/follow.h"
#include "worker/shared.h"
#include "worker/worker.h"

/* how long DROP DATABASE waits for the worker to let go of its slot */
#define DROP_DATABASE_WAIT_MS 10000
/* how long a busy worker has to notice before it is terminated */
#define DROP_DATABASE_GRACE_MS 500
/* and how long the launcher then leaves the database alone */
#define DROP_DATABASE_HOLD_MS 30000

typedef enum PendingRequest
{
	REQUEST_NONE,
	REQUEST_PROBE,				/* flusso was installed: look at the database */
	REQUEST_WORKER,				/* an index exists: run a worker */
	REQUEST_STOP				/* nothing left: drop the slot and stop */
} PendingRequest;

static PendingRequest pending = REQUEST_NONE;
static bool callback_registered = false;

/* documents tables dropped (names) or altered in this transaction */
static List *docs_dropped = NIL;
static bool docs_altered = false;
static object_access_hook_type prev_object_access_hook = NULL;

static void
apply_request(XactEvent event, void *arg)
{
	DatabaseEntry *entry;
	Latch	   *worker_latch = NULL;

	if ((event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PRE_PREPARE) &&
		(docs_dropped != NIL || docs_altered))
	{
		List	   *dropped = docs_dropped;
		bool		altered = docs_altered;

		/* following may drop a shadow table: that is flusso's own drop */
		docs_dropped = NIL;
		docs_altered = false;
		index_follow_docs_tables(dropped, altered);
		docs_dropped = NIL;
		docs_altered = false;
		return;
	}
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE)
	{
		docs_dropped = NIL;
		docs_altered = false;
	}
	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PARALLEL_COMMIT && event != XACT_EVENT_PARALLEL_ABORT)
		return;
	if ((event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT) &&
		pending != REQUEST_NONE && flusso_shared != NULL)
	{
		LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
		entry = shared_database(MyDatabaseId, true);
		if (entry && pending == REQUEST_PROBE)
		{
			entry->has_extension = true;
			entry->probe = true;
		}
		else if (entry && pending == REQUEST_WORKER)
		{
			entry->has_extension = true;
			entry->wanted = true;
			entry->drop_requested = false;
			entry->hold_until = 0;
			entry->failures = 0;
		}
		else if (entry)
		{
			entry->has_extension = false;
			entry->wanted = false;
			entry->drop_requested = true;
			worker_latch = entry->worker_latch;
		}
		LWLockRelease(flusso_shared->lock);
		if (entry == NULL)
			ereport(WARNING,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("flusso serves at most %d databases", FLUSSO_MAX_DATABASES)));
		if (worker_latch)
			SetLatch(worker_latch);
		shared_wake_launcher();
	}
	pending = REQUEST_NONE;
}

static void
request_at_commit(PendingRequest request)
{
	if (!callback_registered)
	{
		RegisterXactCallback(apply_request, NULL);
		callback_registered = true;
	}
	pending = request;
}

/*
 * flusso_register_database(), called by the install script: CREATE
 * EXTENSION has the launcher look at the database at commit, and again now
 * and then, since a restore loads definitions without calling a function.
 */
PG_FUNCTION_INFO_V1(flusso_register_database);

Datum
flusso_register_database(PG_FUNCTION_ARGS)
{
	if (pending == REQUEST_NONE)
		request_at_commit(REQUEST_PROBE);
	PG_RETURN_VOID();
}

/*
 * Ask, at commit, for this database's worker to run (wanted) or to drop
 * its slot and stop.  The last request of the transaction wins.
 */
void
worker_request_at_commit(bool wanted)
{
	request_at_commit(wanted ? REQUEST_WORKER : REQUEST_STOP);
}

/* Is the slot of database dboid held by a process? */
static bool
slot_active(Oid dboid)
{
	char		name[NAMEDATALEN];
	ReplicationSlot *slot;
	bool		active = false;

	snprintf(name, sizeof(name), FLUSSO_SLOT_FORMAT, dboid);
	LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
	slot = SearchNamedReplicationSlot(name, false);
	if (slot)
	{
		SpinLockAcquire(&slot->mutex);
		active = slot->active_pid != 0;
		SpinLockRelease(&slot->mutex);
	}
	LWLockRelease(ReplicationSlotControlLock);
	return active;
}

/*
 * DROP DATABASE: have the worker let go of the slot now, and wait until it
 * has.  A worker between batches sees the request at once; one busy in a
 * long statement, waiting for a consistent point or for a lock is
 * terminated after a moment, as DROP DATABASE WITH (FORCE) would
 * terminate a backend, and releases the slot as it exits.
 */
static void
release_database(Oid dboid)
{
	DatabaseEntry *entry;
	Latch	   *latch = NULL;
	TimestampTz start = GetCurrentTimestamp();
	TimestampTz deadline;
	bool		terminated = false;

	if (flusso_shared == NULL)
		return;
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry = shared_database(dboid, false);
	if (entry)
	{
		entry->stop_requested = true;
		entry->hold_until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
														DROP_DATABASE_HOLD_MS);
		latch = entry->worker_latch;
	}
	LWLockRelease(flusso_shared->lock);
	if (entry == NULL)
		return;
	if (latch)
		SetLatch(latch);

	deadline = TimestampTzPlusMilliseconds(start, DROP_DATABASE_WAIT_MS);
	for (;;)
	{
		pid_t		pid;
		TimestampTz now = GetCurrentTimestamp();

		LWLockAcquire(flusso_shared->lock, LW_SHARED);
		pid = entry->dboid == dboid ? entry->worker_pid : 0;
		LWLockRelease(flusso_shared->lock);
		/* the worker forgets its pid before it releases the slot */
		if ((pid == 0 && !slot_active(dboid)) || now >= deadline)
			break;
		if (pid != 0 && !terminated &&
			TimestampDifferenceExceeds(start, now, DROP_DATABASE_GRACE_MS))
		{
			(void) kill(pid, SIGTERM);
			terminated = true;
		}
		CHECK_FOR_INTERRUPTS();
		pg_usleep(10000L);
	}
}

/*
 * A relation was dropped or altered: if it is a documents table, its index
 * follows at commit (index/follow.c).
 */
static void
note_docs_table(ObjectAccessType access, Oid relid)
{
	Oid			docs = get_namespace_oid(FLUSSO_DOCS_SCHEMA, true);
	MemoryContext old;

	if (!OidIsValid(docs) || get_rel_namespace(relid) != docs)
		return;
	if (!callback_registered)
	{
		RegisterXactCallback(apply_request, NULL);
		callback_registered = true;
	}
	if (access == OAT_POST_ALTER)
	{
		docs_altered = true;
		return;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	docs_dropped = lappend(docs_dropped, get_rel_name(relid));
	MemoryContextSwitchTo(old);
}

static void
object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (classId == RelationRelationId && subId == 0 &&
		(access == OAT_DROP || access == OAT_POST_ALTER))
		note_docs_table(access, objectId);
	if (access != OAT_DROP)
		return;
	if (classId == ExtensionRelationId && objectId == get_extension_oid("flusso", true))
		worker_request_at_commit(false);
	else if (classId == DatabaseRelationId)
		release_database(objectId);
}

void
worker_install_drop_hooks(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = object_access;
}

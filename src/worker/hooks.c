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
 * its slot and exit at once and waits for it; the slot itself stays, and
 * DROP DATABASE removes it with the database.  Should the drop fail anyway,
 * the launcher starts the worker again and nothing was lost.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_database.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/timestamp.h"

#include "worker/shared.h"
#include "worker/worker.h"

/* how long DROP DATABASE waits for the worker to let go of its slot */
#define DROP_DATABASE_WAIT_MS 10000
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
static object_access_hook_type prev_object_access_hook = NULL;

static void
apply_request(XactEvent event, void *arg)
{
	DatabaseEntry *entry;
	Latch	   *worker_latch = NULL;

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

/* DROP DATABASE: have the worker let go of the slot now, and wait. */
static void
release_database(Oid dboid)
{
	DatabaseEntry *entry;
	Latch	   *latch = NULL;
	TimestampTz deadline;

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

	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), DROP_DATABASE_WAIT_MS);
	for (;;)
	{
		pid_t		pid;

		LWLockAcquire(flusso_shared->lock, LW_SHARED);
		pid = entry->dboid == dboid ? entry->worker_pid : 0;
		LWLockRelease(flusso_shared->lock);
		if (pid == 0 || GetCurrentTimestamp() >= deadline)
			break;
		CHECK_FOR_INTERRUPTS();
		pg_usleep(10000L);
	}
}

static void
object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
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

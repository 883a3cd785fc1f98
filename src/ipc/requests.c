/*-------------------------------------------------------------------------
 *
 * requests.c
 *	  What SQL sessions ask of the launcher and the worker of their
 *	  database: look at the database (the extension was installed), run a
 *	  worker (an index exists), or drop the slot and stop (the last index or
 *	  the extension was dropped); and what they and the worker ask of the
 *	  shipper: ship what was queued, or look at the OpenSearch sinks again
 *	  (a sink or a generation changed); and what CREATE DATABASE asks of
 *	  the launcher: list the databases again, so that a copy of a database
 *	  that has flusso (CREATE DATABASE ... TEMPLATE) is probed at once, not
 *	  after the next restart.  A change of flusso's tables made
 *	  by a transaction is counted in shared memory (table_changes) when it
 *	  commits, for the worker and the shipper, which keep what they read of
 *	  them until the count moves (worker/catalog_watch.c,
 *	  shipper/ship_catalog.c).  A request made inside a transaction is carried
 *	  out, through shared memory, when it commits: an aborted CREATE or DROP
 *	  changes nothing.  The last request of a transaction wins.  A running
 *	  worker learns of a request at once (its latch is set): one that waits
 *	  for the catalog to change reads it only then (worker/catalog_watch.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"

#include "ipc/requests.h"
#include "ipc/shared.h"

typedef enum PendingRequest
{
	REQUEST_NONE,
	REQUEST_PROBE,				/* flusso was installed: look at the database */
	REQUEST_WORKER,				/* an index exists: run a worker */
	REQUEST_STOP				/* nothing left: drop the slot and stop */
} PendingRequest;

static PendingRequest pending = REQUEST_NONE;
static bool wake_shipper = false;
static bool list_databases = false;
static bool catalog_changed = false;
static bool callback_registered = false;

/*
 * Have the shipper run (wanted) and ship now, and count a change of
 * flusso's tables (changed); a running shipper is woken for either.
 */
static void
carry_out_for_shipper(bool wanted, bool changed)
{
	DatabaseEntry *entry;
	Latch	   *latch = NULL;

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry = shared_database(MyDatabaseId, false);
	if (entry && wanted)
	{
		entry->shipper_wanted = true;
		entry->shipper_requests++;
	}
	if (entry && changed)
		entry->table_changes++;
	if (entry)
		latch = entry->shipper_latch;
	LWLockRelease(flusso_shared->lock);
	if (entry && wanted)
		shared_wake_shipper(entry);
	else if (latch)
		SetLatch(latch);
}

static void
carry_out(XactEvent event, void *arg)
{
	DatabaseEntry *entry;
	Latch	   *worker_latch = NULL;

	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PARALLEL_COMMIT && event != XACT_EVENT_PARALLEL_ABORT)
		return;
	if ((event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT) &&
		(wake_shipper || catalog_changed) && flusso_shared != NULL)
		carry_out_for_shipper(wake_shipper, catalog_changed);
	wake_shipper = false;
	catalog_changed = false;
	if ((event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT) &&
		list_databases && flusso_shared != NULL)
	{
		LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
		flusso_shared->list_databases = true;
		LWLockRelease(flusso_shared->lock);
		shared_wake_launcher();
	}
	list_databases = false;
	if ((event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT) &&
		pending != REQUEST_NONE && flusso_shared != NULL)
	{
		LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
		/* a database without an entry has no worker to stop */
		entry = shared_database(MyDatabaseId, pending != REQUEST_STOP);
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
			/* a running worker reads the catalog when it learns of this */
			entry->table_changes++;
			worker_latch = entry->worker_latch;
		}
		else if (entry)
		{
			entry->has_extension = false;
			entry->wanted = false;
			entry->drop_requested = true;
			worker_latch = entry->worker_latch;
		}
		LWLockRelease(flusso_shared->lock);
		if (entry == NULL && pending != REQUEST_STOP)
			shared_warn_no_entry(NULL);
		if (worker_latch)
			SetLatch(worker_latch);
		shared_wake_launcher();
	}
	pending = REQUEST_NONE;
}

static void
register_callback(void)
{
	if (!callback_registered)
	{
		RegisterXactCallback(carry_out, NULL);
		callback_registered = true;
	}
}

static void
request_at_commit(PendingRequest request)
{
	register_callback();
	pending = request;
}

/* Have the launcher look at this database, unless more was asked. */
void
request_probe_at_commit(void)
{
	if (pending == REQUEST_NONE)
		request_at_commit(REQUEST_PROBE);
}

/* Have this database's worker run (wanted), or drop its slot and stop. */
void
request_worker_at_commit(bool wanted)
{
	request_at_commit(wanted ? REQUEST_WORKER : REQUEST_STOP);
}

/*
 * Have this database's shipper run and look at its sinks again: a sink or
 * a generation changed.
 */
void
request_shipper_at_commit(void)
{
	register_callback();
	wake_shipper = true;
	catalog_changed = true;
}

/* Have this database's shipper run and ship what was queued. */
void
request_shipping_at_commit(void)
{
	register_callback();
	wake_shipper = true;
}

/* A database was created: have the launcher list the databases again. */
void
request_listing_at_commit(void)
{
	register_callback();
	list_databases = true;
}

/*
 * flusso's tables changed (the worker followed an owner, say): count it,
 * for the worker and the shipper to read them again.
 */
void
request_catalog_look_at_commit(void)
{
	register_callback();
	catalog_changed = true;
}

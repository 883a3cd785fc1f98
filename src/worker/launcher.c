/*-------------------------------------------------------------------------
 *
 * launcher.c
 *	  The "flusso launcher" background worker: starts one worker per
 *	  database that has flusso and at least one index, and restarts it when
 *	  it exits; and one shipper per database whose OpenSearch sinks have
 *	  something to do.
 *
 * The launcher connects to no database, so it cannot read their catalogs.
 * SQL functions tell it about their database through shared memory (at
 * commit, see hooks.c); after a server restart it sends a short-lived probe
 * into every database that allows connections and is not a template, one
 * at a time, and now and then re-probes databases that have flusso but no
 * index (a restore loads definitions without calling a function).  A
 * database created since it started (a copy of one that has flusso,
 * made from a template) is probed as soon as CREATE DATABASE commits.  It
 * never stays connected to anything, so CREATE DATABASE is never blocked.
 *
 * The databases still to probe are the launcher's own list: only one that
 * has flusso takes an entry in shared memory (ipc/shared.c), and the
 * launcher frees the entry of one that no longer has it once nothing runs
 * there, so any number of other databases costs nothing.  When a database
 * with flusso was refused an entry, all being taken, the launcher lists
 * the databases again as soon as one is freed.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "util/xact.h"
#include "settings.h"
#include "ipc/shared.h"
#include "worker/worker.h"

/*
 * How long to wait before restarting a worker that exited: one second,
 * doubling with every exit that came before it streamed, up to a minute,
 * so that a worker failing at start does not flood the log.  A worker
 * that ended on purpose to compile changed indexes is started again at
 * once, unless it did so less than RESTART_AT_ONCE_MS before.
 */
#define RESTART_DELAY_MS 1000
#define RESTART_AT_ONCE_MS 10000
#define RESTART_DELAY_MAX_MS 60000
/* how often to look again at a database that has flusso but no index */
#define REPROBE_INTERVAL_MS 10000
#define LAUNCHER_NAPTIME_MS 1000

/* What the launcher runs, by entry, and what it has still to probe. */
typedef struct LauncherState
{
	BackgroundWorkerHandle **workers;
	BackgroundWorkerHandle **shippers;
	BackgroundWorkerHandle *probe;	/* one probe at a time */
	Oid			probe_dboid;	/* the database it looks at */
	TimestampTz probe_hold_until;	/* no probe starts before */
	List	   *to_probe;		/* OIDs of databases without an entry */
} LauncherState;

/* What a dynamic background worker of the launcher's is. */
typedef enum WorkerKind
{
	KIND_WORKER,
	KIND_PROBE,
	KIND_SHIPPER
} WorkerKind;

static const char *const kind_names[] = {"flusso worker", "flusso probe", "flusso shipper"};
static const char *const kind_functions[] = {"flusso_worker_main", "flusso_probe_main",
"flusso_shipper_main"};

/* Register the launcher; from _PG_init while preloading. */
void
launcher_register(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 5;
	strlcpy(worker.bgw_library_name, "flusso", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "flusso_launcher_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "flusso launcher", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "flusso launcher", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

/*
 * Every database a probe may connect to (not a template, connections
 * allowed) is to be probed: one that has an entry and no worker yet by
 * its entry, the others through the launcher's list.
 */
static void
list_databases(LauncherState *ls)
{
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tuple;

	(void) xact_begin(false, NULL, 0);
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tuple);
		DatabaseEntry *entry;

		if (db->datistemplate || !db->datallowconn)
			continue;
		entry = shared_database(db->oid, false);
		if (entry && !entry->wanted)
			entry->probe = true;
		else if (entry == NULL && !list_member_oid(ls->to_probe, db->oid))
		{
			MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

			ls->to_probe = lappend_oid(ls->to_probe, db->oid);
			MemoryContextSwitchTo(old);
		}
	}
	LWLockRelease(flusso_shared->lock);
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	xact_commit();
}

/* Is the database still there, and may we connect to it? */
static bool
database_usable(Oid dboid)
{
	HeapTuple	tuple;
	bool		usable = false;

	(void) xact_begin(false, NULL, 0);
	tuple = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(dboid));
	if (HeapTupleIsValid(tuple))
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tuple);

		usable = db->datallowconn && !db->datistemplate;
		ReleaseSysCache(tuple);
	}
	xact_commit();
	return usable;
}

/* Start a worker of kind for database dboid; arg is what its main is passed. */
static BackgroundWorkerHandle *
start_worker(Datum arg, Oid dboid, WorkerKind kind)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	worker.bgw_main_arg = arg;
	worker.bgw_notify_pid = MyProcPid;
	strlcpy(worker.bgw_library_name, "flusso", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, kind_functions[kind], BGW_MAXLEN);
	snprintf(worker.bgw_name, BGW_MAXLEN, "%s for database %u", kind_names[kind], dboid);
	strlcpy(worker.bgw_type, kind_names[kind], BGW_MAXLEN);
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
	{
		ereport(WARNING,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("flusso could not start a background worker for database %u", dboid),
				 errhint("Raise max_worker_processes.")));
		return NULL;
	}
	return handle;
}

static bool
running(BackgroundWorkerHandle **handle)
{
	pid_t		pid;

	if (*handle == NULL)
		return false;
	if (GetBackgroundWorkerPid(*handle, &pid) == BGWH_STOPPED)
	{
		pfree(*handle);
		*handle = NULL;
		return false;
	}
	return true;
}

/*
 * Free the entry of a database that no longer has flusso, or that cannot
 * be connected to (unusable), once nothing of the launcher's runs there;
 * a database refused an entry may now have it.  Unless unusable, the
 * entry is looked at again under the lock: a request may just have come.
 */
static void
forget(LauncherState *ls, int i, bool unusable)
{
	DatabaseEntry *entry = &flusso_shared->databases[i];

	if (running(&ls->shippers[i]))
		return;
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	if (unusable || (!entry->wanted && !entry->has_extension && !entry->probe))
	{
		shared_free_index_statuses(entry);
		shared_forget_database(entry);
	}
	LWLockRelease(flusso_shared->lock);
}

/* Start a probe into dboid; false when no worker slot was free. */
static bool
start_probe(LauncherState *ls, Oid dboid)
{
	ls->probe = start_worker(ObjectIdGetDatum(dboid), dboid, KIND_PROBE);
	ls->probe_dboid = dboid;
	if (ls->probe == NULL)
		ls->probe_hold_until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
														   RESTART_DELAY_MAX_MS);
	return ls->probe != NULL;
}

/* One pass over the entries: start what should run, free what is done. */
static void
launch(LauncherState *ls)
{
	TimestampTz now = GetCurrentTimestamp();
	bool		probing = running(&ls->probe);

	for (int i = 0; i < flusso_shared->ndatabases; i++)
	{
		DatabaseEntry *entry = &flusso_shared->databases[i];
		Oid			dboid;
		bool		wanted,
					probe,
					has_extension;
		TimestampTz hold_until,
					probed_at;
		bool		was_running = ls->workers[i] != NULL;

		LWLockAcquire(flusso_shared->lock, LW_SHARED);
		dboid = entry->dboid;
		wanted = entry->wanted;
		probe = entry->probe;
		has_extension = entry->has_extension;
		hold_until = entry->hold_until;
		probed_at = entry->probed_at;
		LWLockRelease(flusso_shared->lock);

		if (!OidIsValid(dboid) || running(&ls->workers[i]) ||
			(probing && ls->probe_dboid == dboid))
			continue;
		if (was_running)
		{
			bool		at_once;

			LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
			at_once = entry->restart_now &&
				TimestampDifferenceExceeds(entry->restarted_at, now, RESTART_AT_ONCE_MS);
			entry->restart_now = false;
			if (at_once)
				entry->restarted_at = now;
			else
			{
				int			delay = RESTART_DELAY_MS << Min(entry->failures, 6);

				entry->restarting = false;
				entry->failures++;
				entry->hold_until = Max(entry->hold_until,
										TimestampTzPlusMilliseconds(now, Min(delay, RESTART_DELAY_MAX_MS)));
			}
			hold_until = entry->hold_until;
			LWLockRelease(flusso_shared->lock);
			if (!at_once)
				continue;
		}
		if (!wanted && !has_extension && !probe)
		{
			/* flusso is gone from there, and its worker too */
			forget(ls, i, false);
			continue;
		}
		if (now < hold_until ||
			(!wanted && (probing || now < ls->probe_hold_until ||
						 !(probe || (has_extension &&
									 TimestampDifferenceExceeds(probed_at, now, REPROBE_INTERVAL_MS))))))
			continue;
		if (!database_usable(dboid))
		{
			/* dropped, or closed to connections */
			forget(ls, i, true);
			continue;
		}
		if (wanted)
			ls->workers[i] = start_worker(Int32GetDatum(i), dboid, KIND_WORKER);
		else
		{
			LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
			entry->probe = false;
			entry->probed_at = now;
			LWLockRelease(flusso_shared->lock);
			probing = start_probe(ls, dboid);
		}
		if (wanted && ls->workers[i] == NULL)
		{
			/* no worker slot free: say so, and try again later, not every second */
			LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
			entry->hold_until = TimestampTzPlusMilliseconds(now, RESTART_DELAY_MAX_MS);
			entry->no_worker_slot = true;
			shared_record_error(entry, "no background worker slot was free for this database's flusso worker, so no index is kept up to date; raise max_worker_processes (the launcher tries again every minute)");
			LWLockRelease(flusso_shared->lock);
		}
	}
}

/*
 * Probe the next database of the launcher's list, when no probe runs; once
 * the list is done, every database was probed.  A database with flusso
 * that was refused an entry is looked for again once one is free.
 */
static void
probe_listed(LauncherState *ls)
{
	bool		refused;

	if (running(&ls->probe) || GetCurrentTimestamp() < ls->probe_hold_until)
		return;
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	refused = ls->to_probe == NIL && flusso_shared->databases_refused &&
		!shared_databases_full();
	if (refused)
		flusso_shared->databases_refused = false;
	LWLockRelease(flusso_shared->lock);
	if (refused)
		list_databases(ls);

	while (ls->to_probe != NIL)
	{
		Oid			dboid = linitial_oid(ls->to_probe);
		bool		has_entry;

		LWLockAcquire(flusso_shared->lock, LW_SHARED);
		has_entry = shared_database(dboid, false) != NULL;
		LWLockRelease(flusso_shared->lock);
		/* one with an entry is probed by it; one gone needs none */
		if (!has_entry && database_usable(dboid) && !start_probe(ls, dboid))
			return;
		ls->to_probe = list_delete_first(ls->to_probe);
		if (ls->probe != NULL)
			return;
	}
	if (!flusso_shared->databases_listed)
	{
		LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
		flusso_shared->databases_listed = true;
		LWLockRelease(flusso_shared->lock);
	}
}

/*
 * Start the shippers that are wanted and not running.  One that exited
 * while still wanted is started again after a delay, as a worker is.
 */
static void
launch_shippers(LauncherState *ls)
{
	TimestampTz now = GetCurrentTimestamp();

	for (int i = 0; i < flusso_shared->ndatabases; i++)
	{
		DatabaseEntry *entry = &flusso_shared->databases[i];
		bool		was_running = ls->shippers[i] != NULL;
		bool		wanted;
		Oid			dboid;

		if (running(&ls->shippers[i]))
			continue;
		LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
		dboid = entry->dboid;
		wanted = entry->shipper_wanted && OidIsValid(dboid);
		/* one that exited to end an overrunning build starts again at once */
		if (was_running && wanted && entry->shipper_overran[0] == '\0')
		{
			int			delay = RESTART_DELAY_MS << Min(entry->shipper_failures, 6);

			entry->shipper_failures++;
			entry->shipper_hold_until = TimestampTzPlusMilliseconds(now, Min(delay, RESTART_DELAY_MAX_MS));
		}
		wanted &= now >= entry->shipper_hold_until;
		LWLockRelease(flusso_shared->lock);
		if (wanted)
			ls->shippers[i] = start_worker(Int32GetDatum(i), dboid, KIND_SHIPPER);
	}
}

/* Entry point of "flusso launcher". */
void
flusso_launcher_main(Datum arg)
{
	LauncherState ls;

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	flusso_shared->launcher_pid = MyProcPid;
	flusso_shared->launcher_latch = MyLatch;
	LWLockRelease(flusso_shared->lock);

	memset(&ls, 0, sizeof(ls));
	ls.workers = MemoryContextAllocZero(TopMemoryContext,
										sizeof(BackgroundWorkerHandle *) * flusso_shared->ndatabases);
	ls.shippers = MemoryContextAllocZero(TopMemoryContext,
										 sizeof(BackgroundWorkerHandle *) * flusso_shared->ndatabases);
	if (!flusso_shared->databases_listed)
		list_databases(&ls);

	for (;;)
	{
		bool		relist;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
		relist = flusso_shared->list_databases;
		flusso_shared->list_databases = false;
		LWLockRelease(flusso_shared->lock);
		if (relist)
			list_databases(&ls);
		launch(&ls);
		probe_listed(&ls);
		launch_shippers(&ls);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 LAUNCHER_NAPTIME_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/*-------------------------------------------------------------------------
 *
 * shared.c
 *	  Allocation of flusso's shared memory, and the small operations on
 *	  its database entries that the launcher, the workers and the SQL
 *	  functions share.
 *
 * An entry belongs to a database that has flusso, from the moment a SQL
 * function or a probe finds the extension there until the launcher sees
 * that it has gone and nothing runs for it any more; a database without
 * flusso never holds one, however many there are.  The entries are
 * flusso.max_databases, reserved at server start; a database with flusso
 * that finds none free is said to be refused, loudly (requests.c,
 * probe.c, status.c), and the launcher looks for it again once an entry
 * is freed.  The index statuses of an entry are index_status.c's.
 *
 * Beside the entries, one condition variable per entry, which the worker
 * and the shipper broadcast on when a database's indexes got further and
 * flusso_wait() sleeps on (api/wait.c).  They are kept apart from the
 * entries, which are cleared when a database lets go of one, so that a
 * session sleeping on one never finds it wiped.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "ipc/shared.h"
#include "settings.h"

FlussoShared *flusso_shared = NULL;

static ConditionVariable *progress_cvs = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* The fixed part: the entries. */
static Size
shared_size(void)
{
	return add_size(offsetof(FlussoShared, databases),
					mul_size(flusso_max_databases, sizeof(DatabaseEntry)));
}

static void
request_shared(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(shared_size());
	RequestAddinShmemSpace(mul_size(flusso_max_databases, sizeof(ConditionVariable)));
	RequestNamedLWLockTranche("flusso", 1);
}

static void
startup_shared(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	flusso_shared = ShmemInitStruct("flusso", shared_size(), &found);
	if (!found)
	{
		memset(flusso_shared, 0, shared_size());
		flusso_shared->lock = &(GetNamedLWLockTranche("flusso"))->lock;
		flusso_shared->ndatabases = flusso_max_databases;
	}
	progress_cvs = ShmemInitStruct("flusso progress",
								   mul_size(flusso_max_databases, sizeof(ConditionVariable)),
								   &found);
	if (!found)
	{
		for (int i = 0; i < flusso_max_databases; i++)
			ConditionVariableInit(&progress_cvs[i]);
	}
	LWLockRelease(AddinShmemInitLock);
}

/* From _PG_init, when loaded through shared_preload_libraries. */
void
shared_install_hooks(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = request_shared;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = startup_shared;
}

/*
 * The entry of a database; with create, a free entry is claimed for it.
 * The caller holds flusso_shared->lock exclusively when create is true.
 * NULL when not found, or when every entry is taken: then the database is
 * refused, and the launcher will look for it again once one is freed.
 */
DatabaseEntry *
shared_database(Oid dboid, bool create)
{
	DatabaseEntry *free_entry = NULL;

	for (int i = 0; i < flusso_shared->ndatabases; i++)
	{
		DatabaseEntry *entry = &flusso_shared->databases[i];

		if (entry->dboid == dboid)
			return entry;
		if (entry->dboid == InvalidOid && free_entry == NULL)
			free_entry = entry;
	}
	if (!create)
		return NULL;
	if (free_entry == NULL)
	{
		flusso_shared->databases_refused = true;
		return NULL;
	}
	memset(free_entry, 0, sizeof(DatabaseEntry));
	free_entry->dboid = dboid;
	return free_entry;
}

/* Is every entry taken?  The caller holds the lock. */
bool
shared_databases_full(void)
{
	for (int i = 0; i < flusso_shared->ndatabases; i++)
	{
		if (flusso_shared->databases[i].dboid == InvalidOid)
			return false;
	}
	return true;
}

/*
 * Say, as a WARNING, that database (NULL: the current one) has flusso but
 * no entry, so no worker keeps it up to date, and which setting to raise.
 */
void
shared_warn_no_entry(const char *database)
{
	ereport(WARNING,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 database
			 ? errmsg("no flusso worker keeps database \"%s\" up to date", database)
			 : errmsg("no flusso worker keeps this database up to date"),
			 errdetail_plural("The %d entry flusso.max_databases reserves is held by another database with flusso.",
							  "All %d entries flusso.max_databases reserves are held by other databases with flusso.",
							  flusso_shared->ndatabases, flusso_shared->ndatabases),
			 errhint("Raise flusso.max_databases and restart the server.")));
}

/*
 * Free the entry of a database that no longer has flusso, or no longer
 * exists, once its index statuses are freed (shared_free_index_statuses);
 * the caller holds the lock exclusively, and nothing runs for it.
 */
void
shared_forget_database(DatabaseEntry *entry)
{
	Assert(!DsaPointerIsValid(entry->indexes));
	memset(entry, 0, sizeof(DatabaseEntry));
}

void
shared_wake_launcher(void)
{
	Latch	   *latch = flusso_shared ? flusso_shared->launcher_latch : NULL;

	if (latch)
		SetLatch(latch);
}

/*
 * Wake the shipper of a database, or the launcher to start one (the
 * caller set shipper_wanted).  The caller does not hold the lock.
 */
void
shared_wake_shipper(DatabaseEntry *entry)
{
	Latch	   *latch;

	LWLockAcquire(flusso_shared->lock, LW_SHARED);
	latch = entry->shipper_latch;
	LWLockRelease(flusso_shared->lock);
	if (latch)
		SetLatch(latch);
	else
		shared_wake_launcher();
}

/* Remember an error for flusso_status(); the caller holds the lock. */
void
shared_record_error(DatabaseEntry *entry, const char *message)
{
	strlcpy(entry->last_error, message, FLUSSO_ERROR_LEN);
	entry->last_error_at = GetCurrentTimestamp();
}

/* What flusso_wait() sleeps on for the database of entry. */
ConditionVariable *
shared_progress_cv(const DatabaseEntry *entry)
{
	return &progress_cvs[entry - flusso_shared->databases];
}

/*
 * The worker or the shipper published that the indexes of entry got
 * further, or can no longer: wake whoever waits for them.  The caller does
 * not hold the lock.
 */
void
shared_progress_made(const DatabaseEntry *entry)
{
	ConditionVariableBroadcast(shared_progress_cv(entry));
}

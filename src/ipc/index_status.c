/*-------------------------------------------------------------------------
 *
 * index_status.c
 *	  The status of each index of a database, for flusso_status(): its
 *	  phase, seed progress, error and shipping, kept in shared memory for
 *	  as many indexes as the database has.
 *
 * A database's statuses are one array, allocated in a dynamic shared
 * memory area (utils/dsa.h) and grown by doubling when an index is added.
 * The area begins in fixed shared memory of its own, created by the
 * postmaster (which never allocates from it), and takes more segments
 * as needed, as the cumulative statistics do; every process attaches to
 * it the first time it looks at a status, and stays attached.  The array
 * is allocated, grown and freed only under FlussoShared->lock held
 * exclusively, so a status found under the lock stays where it is until
 * the lock is released.  It does not own the database entries
 * (shared.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "ipc/shared.h"

/* the first statuses fit in fixed shared memory: about 180 */
#define STATUS_AREA_FIXED_SIZE	(256 * 1024)
/* the first array of a database has room for this many */
#define STATUS_ARRAY_MIN		16

static dsa_area *status_area = NULL;	/* this process's view of it */
static void *status_place = NULL;	/* where it begins */

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* The fixed part of the area, in shared memory of its own. */
static Size
status_area_size(void)
{
	return MAXALIGN(Max(STATUS_AREA_FIXED_SIZE, dsa_minimum_size()));
}

static void
request_statuses(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(status_area_size());
}

/*
 * Create the area, in the postmaster at shared memory initialisation,
 * with the lock tranche of flusso's shared memory (shared.c).  It is
 * pinned, so that it outlives every process that attaches, and the
 * postmaster lets go of it at once.
 */
static void
startup_statuses(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	status_place = ShmemInitStruct("flusso index statuses", status_area_size(), &found);
	if (!found)
	{
		dsa_area   *created = dsa_create_in_place(status_place, status_area_size(),
												  GetNamedLWLockTranche("flusso")->lock.tranche,
												  NULL);

		dsa_pin(created);
		dsa_detach(created);
	}
	LWLockRelease(AddinShmemInitLock);
}

/* From _PG_init, when loaded through shared_preload_libraries, after shared.c's. */
void
status_install_hooks(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = request_statuses;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = startup_statuses;
}

/* This process's view of the area, attached on first use. */
static dsa_area *
area(void)
{
	if (status_area == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		status_area = dsa_attach_in_place(status_place, NULL);
		dsa_pin_mapping(status_area);
		on_shmem_exit(dsa_on_shmem_exit_release_in_place,
					  PointerGetDatum(status_place));
		MemoryContextSwitchTo(old);
	}
	return status_area;
}

/* The statuses of a database; the caller holds the lock. */
static IndexStatus *
statuses_of(DatabaseEntry *entry)
{
	if (!DsaPointerIsValid(entry->indexes))
		return NULL;
	return dsa_get_address(area(), entry->indexes);
}

/* A copy of the statuses, in the caller's context; the caller holds the lock. */
IndexStatus *
shared_copy_index_statuses(DatabaseEntry *entry)
{
	IndexStatus *copy = palloc(sizeof(IndexStatus) * Max(entry->nindexes, 1));

	if (entry->nindexes > 0)
		memcpy(copy, statuses_of(entry), sizeof(IndexStatus) * entry->nindexes);
	return copy;
}

/*
 * Room for n statuses, keeping those there are.  The caller holds the
 * lock exclusively.  Running out of shared memory is an error.
 */
static IndexStatus *
reserve(DatabaseEntry *entry, int n)
{
	dsa_pointer grown;
	int			room;

	if (n <= entry->maxindexes)
		return statuses_of(entry);
	room = Max(Max(n, entry->maxindexes * 2), STATUS_ARRAY_MIN);
	grown = dsa_allocate(area(), sizeof(IndexStatus) * room);
	if (entry->nindexes > 0)
		memcpy(dsa_get_address(area(), grown), statuses_of(entry),
			   sizeof(IndexStatus) * entry->nindexes);
	if (DsaPointerIsValid(entry->indexes))
		dsa_free(area(), entry->indexes);
	entry->indexes = grown;
	entry->maxindexes = room;
	return dsa_get_address(area(), grown);
}

/* Free the statuses of a database; the caller holds the lock exclusively. */
void
shared_free_index_statuses(DatabaseEntry *entry)
{
	if (DsaPointerIsValid(entry->indexes))
		dsa_free(area(), entry->indexes);
	entry->indexes = InvalidDsaPointer;
	entry->nindexes = 0;
	entry->maxindexes = 0;
}

/* The status of the named index, or NULL; the caller holds the lock. */
IndexStatus *
shared_index_status(DatabaseEntry *entry, const char *name)
{
	IndexStatus *statuses = statuses_of(entry);

	for (int i = 0; i < entry->nindexes; i++)
	{
		if (strcmp(statuses[i].name, name) == 0)
			return &statuses[i];
	}
	return NULL;
}

/*
 * The status entries become those of names, in order: an index keeps its
 * status wherever it moves, a new one starts idle.  The caller holds the
 * lock exclusively.
 */
void
shared_list_indexes(DatabaseEntry *entry, List *names)
{
	IndexStatus *listed = palloc(sizeof(IndexStatus) * Max(list_length(names), 1));
	int			nlisted = 0;
	ListCell   *lc;

	foreach(lc, names)
	{
		char	   *name = lfirst(lc);
		IndexStatus *known = shared_index_status(entry, name);

		if (known)
			listed[nlisted] = *known;
		else
		{
			memset(&listed[nlisted], 0, sizeof(IndexStatus));
			strlcpy(listed[nlisted].name, name, NAMEDATALEN);
		}
		nlisted++;
	}
	if (nlisted > 0)
		memcpy(reserve(entry, nlisted), listed, sizeof(IndexStatus) * nlisted);
	entry->nindexes = nlisted;
	pfree(listed);
}

/*
 * Set the phase of an index, with what flusso_status() shows beside it (a
 * reason, or NULL); an index not listed yet is added.  The caller holds
 * the lock exclusively.
 */
void
shared_set_phase(DatabaseEntry *entry, const char *name, IndexPhase phase,
				 const char *message)
{
	IndexStatus *status = shared_index_status(entry, name);

	if (status == NULL)
	{
		IndexStatus *statuses = reserve(entry, entry->nindexes + 1);

		status = &statuses[entry->nindexes];
		entry->nindexes++;
		memset(status, 0, sizeof(IndexStatus));
		strlcpy(status->name, name, NAMEDATALEN);
	}
	/*
	 * Out of phase live, what its sinks held says nothing of what they
	 * will hold: flusso_wait() learns it anew from the worker and the
	 * shipper, and whoever waits looks at the new phase at once.
	 */
	if (phase != PHASE_LIVE)
	{
		status->applied_lsn = InvalidXLogRecPtr;
		status->applied_at = 0;
		status->shipped_lsn = InvalidXLogRecPtr;
		status->refreshed_lsn = InvalidXLogRecPtr;
	}
	if (status->phase != phase)
		shared_progress_made(entry);
	status->phase = phase;
	strlcpy(status->error, message ? message : "", FLUSSO_ERROR_LEN);
}

/*
 * Set the phase of an index of this database (when it has an entry),
 * taking the lock; with a seed's progress when done is not negative: the
 * root rows read of about total, and the rate of the seed, measured from
 * where it starts or resumes.
 */
void
shared_report_phase(const char *name, IndexPhase phase, const char *message,
					int64 done, int64 total)
{
	DatabaseEntry *entry;

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry = shared_database(MyDatabaseId, false);
	if (entry)
	{
		IndexStatus *status = shared_index_status(entry, name);
		bool		was_seeding = status && status->phase == PHASE_SEEDING;

		shared_set_phase(entry, name, phase, message);
		status = shared_index_status(entry, name);
		if (done >= 0)
		{
			TimestampTz now = GetCurrentTimestamp();

			status->seed_done = done;
			status->seed_total = Max(total, done);
			if (phase == PHASE_SEEDING && !was_seeding)
				rate_restart(&status->seed_rate, now, done);
			else
				rate_note(&status->seed_rate, now, done);
		}
	}
	LWLockRelease(flusso_shared->lock);
}

const char *
phase_name(IndexPhase phase)
{
	switch (phase)
	{
		case PHASE_IDLE:
			return "idle";
		case PHASE_SEEDING:
			return "snapshot";
		case PHASE_LIVE:
			return "live";
		case PHASE_ERROR:
			return "error";
	}
	return "idle";
}

/*-------------------------------------------------------------------------
 *
 * shared.h
 *	  flusso's shared memory: the launcher, one entry per database that has
 *	  flusso (worker, requests, progress, errors), and per-index status.
 *
 * Every field is read and written under FlussoShared->lock, except the
 * latches, which are set without it.  The entries are flusso.max_databases,
 * reserved at server start; the status of a database's indexes, as many as
 * it has, lives in a dynamic shared memory area (index_status.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_IPC_SHARED_H
#define FLUSSO_IPC_SHARED_H

#include "access/xlogdefs.h"
#include "util/rate.h"
#include "datatype/timestamp.h"
#include "nodes/pg_list.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/dsa.h"

#define FLUSSO_ERROR_LEN		512

/* The phases an index goes through; the names are flusso_status()'s. */
typedef enum IndexPhase
{
	PHASE_IDLE,					/* nothing to do yet */
	PHASE_SEEDING,				/* seeding: "snapshot" in flusso_status() */
	PHASE_LIVE,					/* following changes */
	PHASE_ERROR					/* stopped, see error */
} IndexPhase;

typedef struct IndexStatus
{
	char		name[NAMEDATALEN];
	IndexPhase	phase;
	int64		seed_done;
	int64		seed_total;
	RateWindow	seed_rate;		/* root rows the current seed read */
	char		error[FLUSSO_ERROR_LEN];

	/* its own backlog, apart from the database's: the worker's */
	int64		owed;			/* documents owed, at most */
	TimestampTz owed_since;		/* commit of the oldest change owed, 0: none */
	double		build_ms;		/* what building one document took lately */

	/* the OpenSearch sink: what the shipper did since it started */
	int64		shipped;
	RateWindow	ship_rate;		/* documents shipped */
	char		ship_error[FLUSSO_ERROR_LEN];
	TimestampTz ship_error_at;

	/*
	 * How far its sinks have got, for flusso_wait() (api/wait.c): every
	 * change that committed at or before applied_lsn is in the table sink
	 * and queued for OpenSearch (the worker published that at applied_at,
	 * after the commits that wrote it); at or before shipped_lsn,
	 * acknowledged by OpenSearch in the served generation; at or before
	 * refreshed_lsn, visible to _search too.  0: not so far.
	 */
	XLogRecPtr	applied_lsn;
	TimestampTz applied_at;
	XLogRecPtr	shipped_lsn;
	XLogRecPtr	refreshed_lsn;
	/* what sessions wait for: the shipper looks, or refreshes, up to it */
	XLogRecPtr	ship_wanted_lsn;
	XLogRecPtr	refresh_wanted_lsn;
	/* why shipping cannot get there now, in words: "" when it can */
	char		ship_blocked[FLUSSO_ERROR_LEN];
} IndexStatus;

typedef struct DatabaseEntry
{
	Oid			dboid;			/* InvalidOid: a free entry */
	bool		wanted;			/* has flusso and an index: run a worker */
	bool		probe;			/* launcher should look at this database */
	bool		has_extension;	/* flusso is installed: look again now and then */
	TimestampTz probed_at;
	TimestampTz hold_until;		/* launcher starts no worker before */
	int			failures;		/* exits since the worker last streamed */
	bool		restart_now;	/* it ended on purpose, to compile anew */
	bool		restarting;		/* and the next is to stream soon: what a
								 * session waits for stays reachable */
	TimestampTz restarted_at;	/* when the launcher last did so at once */
	bool		no_worker_slot; /* the worker could not be started */

	/* the worker */
	pid_t		worker_pid;
	Latch	   *worker_latch;
	bool		stop_requested; /* release the slot and exit */
	bool		drop_requested; /* drop the slot and exit: nothing left */
	uint64		table_changes;	/* commits that changed flusso's tables */
	char		state[64];		/* what it is doing, in words */

	/* the shipper: runs while an OpenSearch sink has something to do */
	bool		shipper_wanted;
	uint64		shipper_requests;	/* asks for it so far */
	pid_t		shipper_pid;
	Latch	   *shipper_latch;
	TimestampTz shipper_hold_until; /* launcher starts none before */
	int			shipper_failures;	/* exits since it last shipped */
	char		shipper_overran[NAMEDATALEN];	/* the index whose build it
												 * exited to end, or "" */

	/* progress */
	bool		streaming;		/* the worker is past its start, decoding */
	XLogRecPtr	confirmed_lsn;
	TimestampTz oldest_unresolved;	/* of a change read, not owed by an
									 * index yet; 0: none */
	bool		caught_up;		/* the last turn read all WAL flushed */
	TimestampTz caught_up_at;	/* when it ended */
	XLogRecPtr	resolved_lsn;	/* WAL read and resolved into documents owed */
	RateWindow	resolve_rate;	/* of resolved_lsn, since it was last caught up */
	int64		documents_owed; /* resolved, not built yet (repeats counted) */
	double		build_rate;		/* documents built a second, last time */
	int64		changes_captured;
	int64		documents_written;
	int64		batches;
	char		last_error[FLUSSO_ERROR_LEN];
	TimestampTz last_error_at;
	char		exit_error[FLUSSO_ERROR_LEN];	/* what the worker last failed
												 * with, until it streams */

	/* the status of its indexes: an array in the status area */
	int			nindexes;
	int			maxindexes;		/* room in the array */
	dsa_pointer indexes;
} DatabaseEntry;

typedef struct FlussoShared
{
	LWLock	   *lock;
	pid_t		launcher_pid;
	Latch	   *launcher_latch;
	bool		databases_listed;	/* launcher probed every database once */
	bool		databases_refused;	/* one with flusso found no free entry */
	bool		list_databases; /* a database was created: list them again */
	int			ndatabases;		/* flusso.max_databases */
	DatabaseEntry databases[FLEXIBLE_ARRAY_MEMBER];
} FlussoShared;

extern FlussoShared *flusso_shared;

extern void shared_request(void);
extern void shared_install_hooks(void);
extern DatabaseEntry *shared_database(Oid dboid, bool create);
extern bool shared_databases_full(void);
extern void shared_forget_database(DatabaseEntry *entry);
extern void shared_warn_no_entry(const char *database);
extern void shared_wake_launcher(void);
extern void shared_wake_shipper(DatabaseEntry *entry);
extern void shared_record_error(DatabaseEntry *entry, const char *message);
extern ConditionVariable *shared_progress_cv(const DatabaseEntry *entry);
extern void shared_progress_made(const DatabaseEntry *entry);

/* index_status.c */
extern void status_install_hooks(void);
extern IndexStatus *shared_index_status(DatabaseEntry *entry, const char *name);
extern IndexStatus *shared_copy_index_statuses(DatabaseEntry *entry);
extern void shared_free_index_statuses(DatabaseEntry *entry);
extern void shared_list_indexes(DatabaseEntry *entry, List *names);
extern void shared_set_phase(DatabaseEntry *entry, const char *name, IndexPhase phase,
							 const char *message);
extern void shared_report_phase(const char *name, IndexPhase phase, const char *message,
								int64 done, int64 total);
extern const char *phase_name(IndexPhase phase);

#endif							/* FLUSSO_IPC_SHARED_H */

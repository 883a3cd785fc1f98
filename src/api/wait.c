/*-------------------------------------------------------------------------
 *
 * wait.c
 *	  flusso_wait(name, timeout, searchable, upstream_lsn, subscription):
 *	  wait, for at most timeout, until every change committed before the
 *	  call (or, with upstream_lsn, before that position of the publisher a
 *	  subscription applies here) is in an index's sinks (and, with
 *	  searchable, visible to OpenSearch's _search); true once it is, false
 *	  at the timeout or at once when it cannot become so now.
 *
 * What it waits for is a position in the WAL, taken when it is called:
 * the end of the WAL flushed then, which every commit made visible before
 * it with synchronous_commit on has reached, and the end of this
 * session's own last commit, flushed if an asynchronous commit left it
 * behind.  The worker publishes, per index, the position up to which
 * every change is in the table sink and queued for OpenSearch
 * (applied_lsn: engine_publish_progress()); the shipper, while a session
 * waits for it, the positions OpenSearch has acknowledged and refreshed
 * up to (shipper/ship_wait.c).  Both broadcast on the database's condition
 * variable when these move, or when a worker, a shipper or an index can
 * no longer get there (a phase that is not live, a worker that stops,
 * shipping stopped, failing or holding rejected documents): the session
 * sleeps on it in between, holding no snapshot of its own and no lock but
 * the share locks its statement took on flusso's catalog, and wakes the
 * worker or the shipper when its position is theirs to reach.
 *
 * With upstream_lsn, a position of the publisher (pg_current_wal_lsn()
 * there, after the application's commit), the session first polls the
 * subscription until it has applied every publisher change before it
 * (source/upstream.c); the position to wait for here is then the end of
 * the WAL inserted so far, which holds what the apply worker committed,
 * flushed (it commits asynchronously by default).  A disabled
 * subscription makes the wait false at once; one whose apply worker is
 * not running makes it false at the timeout, each with a NOTICE saying
 * so.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/lock.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "settings.h"
#include "ipc/change_count.h"
#include "ipc/shared.h"
#include "sink/sink.h"
#include "source/upstream.h"
#include "store/catalog_index.h"
#include "util/access.h"
#include "util/spi_run.h"

PG_FUNCTION_INFO_V1(flusso_wait);

/* the longest wait one call takes, whatever timeout asks: a day */
#define WAIT_MAX_MS (24L * 60 * 60 * 1000)

/* how often a wait looks for the worker that restarts to compile anew */
#define RESTART_POLL_MS 20

/* how often a wait for a publisher position looks at the subscription */
#define UPSTREAM_POLL_MS 5

/* What a session waits for now, and who is to get there. */
typedef enum WaitStage
{
	STAGE_NONE,
	STAGE_APPLIED,				/* the worker: the table sink and the outbox */
	STAGE_SHIPPED,				/* the shipper: acknowledged by OpenSearch */
	STAGE_REFRESHED				/* the shipper: visible to _search */
} WaitStage;

typedef enum WaitAnswer
{
	WAIT_DONE,					/* the sinks hold every change up to the target */
	WAIT_PENDING,				/* not yet: the worker or the shipper is on it */
	WAIT_CANNOT					/* not now: why says why */
} WaitAnswer;

/* What a session waits for, and what it learnt last. */
typedef struct Waiter
{
	const char *index;
	XLogRecPtr	target;
	bool		opensearch;		/* the index has an OpenSearch sink */
	bool		searchable;		/* and _search must see the changes */
	char		why[FLUSSO_ERROR_LEN];
	WaitStage	stage;			/* what it waits for now */
} Waiter;

/*
 * What this session read of the last index it waited for, while flusso's
 * tables have not changed since (change_count): an application waits
 * after every write, and reading the catalog each time cost more than the
 * wait.  Who may wait is checked at every call, from the system caches.
 */
typedef struct KnownIndex
{
	char		name[NAMEDATALEN];	/* "": none */
	uint64		changes;		/* change_count() when read */
	Oid			owner;
	bool		opensearch;		/* it has an OpenSearch sink */
} KnownIndex;

static KnownIndex known_index;

/*
 * The tables the worker writes: flusso's own and the documents tables,
 * the seeds' new ones too, as this session read them from pg_class while
 * flusso's tables and the catalog have not changed since (its own
 * relcache invalidations are counted from the first wait on).
 */
typedef struct WrittenTables
{
	bool		read;
	uint64		changes;		/* change_count() when read */
	int			ntables;
	Oid		   *relids;			/* in TopMemoryContext */
} WrittenTables;

static WrittenTables written;

/* The owner of index name, and whether it has an OpenSearch sink. */
static void
look_up(DatabaseEntry *entry, const char *name, Oid *owner, bool *opensearch)
{
	uint64		changes = entry ? change_count(entry) : 0;
	StoredIndex *index;

	if (entry && strcmp(known_index.name, name) == 0 && known_index.changes == changes)
	{
		*owner = known_index.owner;
		*opensearch = known_index.opensearch;
		return;
	}
	index = catalog_load_index(name);
	*owner = index->owner;
	*opensearch = sink_for_index(name, index->owner, NULL)->server != NULL;
	known_index.name[0] = '\0';
	if (entry && strlen(name) < NAMEDATALEN)
	{
		strlcpy(known_index.name, name, NAMEDATALEN);
		known_index.changes = changes;
		known_index.owner = *owner;
		known_index.opensearch = *opensearch;
	}
}

/* Read the tables the worker writes, unless what was read still holds. */
static void
read_written_tables(DatabaseEntry *entry)
{
	static bool watching = false;
	Datum		schemas[3] = {CStringGetTextDatum(FLUSSO_SCHEMA),
		CStringGetTextDatum(FLUSSO_DOCS_SCHEMA), CStringGetTextDatum(FLUSSO_SEED_SCHEMA)};
	Oid			types[1] = {TEXTARRAYOID};
	Datum		values[1];
	uint64		changes;
	List	   *relids = NIL;

	if (!watching)
	{
		change_count_watch(NULL, 0);
		watching = true;
	}
	changes = change_count(entry);
	if (written.read && written.changes == changes)
		return;
	values[0] = PointerGetDatum(construct_array(schemas, 3, TEXTOID, -1, false, TYPALIGN_INT));
	(void) spi_read("SELECT c.oid FROM pg_catalog.pg_class c "
					"JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace "
					"WHERE n.nspname OPERATOR(pg_catalog.=) ANY ($1) "
					"AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog.\"char\"[])",
					1, types, values, true, 0, spi_read_oid, &relids);
	if (written.relids)
		pfree(written.relids);
	written.relids = MemoryContextAlloc(TopMemoryContext, sizeof(Oid) * Max(list_length(relids), 1));
	written.ntables = list_length(relids);
	for (int i = 0; i < written.ntables; i++)
		written.relids[i] = list_nth_oid(relids, i);
	written.read = true;
	written.changes = changes;
}

/*
 * A table the worker writes that this session holds a lock on that its
 * writes would wait for (SHARE or stronger: LOCK TABLE ... IN SHARE
 * MODE), or InvalidOid.  The worker would wait for this transaction to
 * end, every index of the database with it: a wait could only time out.
 */
static Oid
table_locked_against_worker(DatabaseEntry *entry)
{
	read_written_tables(entry);
	for (int i = 0; i < written.ntables; i++)
	{
		LOCKTAG		tag;

		SET_LOCKTAG_RELATION(tag, MyDatabaseId, written.relids[i]);
		if (compat_lock_held_at_least(&tag, ShareLock))
			return written.relids[i];
	}
	return InvalidOid;
}

/*
 * The position every change committed before now has reached: the WAL
 * flushed, or this session's last commit, whose end is flushed first when
 * an asynchronous commit left it behind, so that the worker may read it.
 */
static XLogRecPtr
wait_target(void)
{
	XLogRecPtr	target = GetFlushRecPtr(NULL);

	if (XactLastCommitEnd > target)
	{
		XLogFlush(XactLastCommitEnd);
		target = XactLastCommitEnd;
	}
	return target;
}

/*
 * The end of the WAL inserted so far, flushed: what another process (a
 * subscription's apply worker) committed before now, asynchronously or
 * not, is then WAL the worker may read.  At the start of a page the
 * insert position is past the page's header, where no record ends: the
 * end is the page boundary, as far as a flush can be asked for.
 */
static XLogRecPtr
flush_inserted(void)
{
	XLogRecPtr	end = GetXLogInsertRecPtr();

	if (XLogSegmentOffset(end, wal_segment_size) == SizeOfXLogLongPHD)
		end -= SizeOfXLogLongPHD;
	else if (end % XLOG_BLCKSZ == SizeOfXLogShortPHD)
		end -= SizeOfXLogShortPHD;
	XLogFlush(end);
	return end;
}

/* The timeout in milliseconds, refused when negative or not finite. */
static long
timeout_ms(const Interval *timeout)
{
	double		ms;

	if (!compat_interval_is_finite(timeout))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("flusso_wait() timeout must be finite")));
	ms = (double) timeout->time / 1000.0 +
		((double) timeout->day + (double) timeout->month * DAYS_PER_MONTH) * 86400000.0;
	if (ms < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("flusso_wait() timeout must not be negative")));
	return (long) Min(ms, (double) WAIT_MAX_MS);
}

static WaitAnswer
cannot(Waiter *w, const char *why)
{
	strlcpy(w->why, why, FLUSSO_ERROR_LEN);
	return WAIT_CANNOT;
}

/*
 * Where w stands, from what the worker and the shipper published; the
 * caller holds the lock exclusively, for what w asks of the shipper.
 */
static WaitAnswer
look(DatabaseEntry *entry, Waiter *w)
{
	IndexStatus *status;

	w->stage = STAGE_NONE;
	/* a worker that ended to compile a changed catalog is started again at once */
	if ((entry->worker_pid == 0 || !entry->streaming) && entry->restarting)
		return WAIT_PENDING;
	if (entry->worker_pid == 0 || !entry->streaming)
		return cannot(w, "No flusso worker is following this database's changes now (see flusso_status()).");
	status = shared_index_status(entry, w->index);
	if (status == NULL)
		return cannot(w, "The worker has not taken the index in yet.");
	switch (status->phase)
	{
		case PHASE_IDLE:
			return cannot(w, "The worker has not started following the index yet.");
		case PHASE_SEEDING:
			return cannot(w, "The index is being seeded: its documents may miss changes until the seed ends.");
		case PHASE_ERROR:
			return cannot(w, "The index is in error (see last_error in flusso_status()).");
		case PHASE_LIVE:
			break;
	}
	if (status->applied_lsn < w->target)
	{
		w->stage = STAGE_APPLIED;
		return WAIT_PENDING;
	}
	if (!w->opensearch)
		return WAIT_DONE;
	if (entry->shipper_pid == 0)
		return cannot(w, "The OpenSearch shipper of this database is not running.");
	if (status->ship_blocked[0] != '\0')
		return cannot(w, status->ship_blocked);
	if (status->shipped_lsn < w->target)
	{
		status->ship_wanted_lsn = Max(status->ship_wanted_lsn, w->target);
		/* asked now, the refresh follows in the same pass as the answer */
		if (w->searchable)
			status->refresh_wanted_lsn = Max(status->refresh_wanted_lsn, w->target);
		w->stage = STAGE_SHIPPED;
		return WAIT_PENDING;
	}
	if (w->searchable && status->refreshed_lsn < w->target)
	{
		status->refresh_wanted_lsn = Max(status->refresh_wanted_lsn, w->target);
		w->stage = STAGE_REFRESHED;
		return WAIT_PENDING;
	}
	return WAIT_DONE;
}

/*
 * Sleep on the database's condition variable until w is done, cannot be,
 * or deadline passes; each time it wakes, it looks again.  As it enters a
 * stage, it wakes whoever is to get there (the worker may be napping
 * between its looks for new WAL, the shipper between passes), once.
 */
static WaitAnswer
wait_for(DatabaseEntry *entry, Waiter *w, TimestampTz deadline)
{
	ConditionVariable *cv = shared_progress_cv(entry);
	WaitStage	woken = STAGE_NONE;
	WaitAnswer	answer;

	ConditionVariablePrepareToSleep(cv);
	for (;;)
	{
		Latch	   *latch = NULL;
		long		left;

		LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
		answer = look(entry, w);
		if (answer == WAIT_PENDING && w->stage != woken)
		{
			latch = w->stage == STAGE_APPLIED ? entry->worker_latch : entry->shipper_latch;
			/* the shipper may reset its latch mid-pass: an ask it sees after */
			if (w->stage != STAGE_APPLIED)
				entry->shipper_requests++;
		}
		LWLockRelease(flusso_shared->lock);
		if (answer != WAIT_PENDING)
			break;
		if (latch != NULL)
			SetLatch(latch);
		woken = w->stage;
		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);
		if (left <= 0)
			break;
		/* no one to wake (a worker restarting): look again soon */
		if (w->stage == STAGE_NONE)
			left = Min(left, RESTART_POLL_MS);
		(void) ConditionVariableTimedSleep(cv, left, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	return answer;
}

/*
 * Poll the subscription (the one named, or the only one feeding flusso's
 * tables) until it has applied every publisher change before lsn, it is
 * disabled, or deadline passes; each look reads it afresh, in a context
 * of its own.
 */
static WaitAnswer
wait_upstream(Waiter *w, const char *subscription, XLogRecPtr lsn, TimestampTz deadline)
{
	MemoryContext poll = AllocSetContextCreate(CurrentMemoryContext, "flusso upstream wait",
											   ALLOCSET_SMALL_SIZES);
	MemoryContext caller = MemoryContextSwitchTo(poll);
	WaitAnswer	answer = WAIT_PENDING;

	for (;;)
	{
		Upstream   *u;
		char	   *problem;

		MemoryContextReset(poll);
		u = upstream_find(subscription);
		if (upstream_reached(u, lsn))
		{
			answer = WAIT_DONE;
			break;
		}
		problem = upstream_problem(u);
		if (problem && !u->enabled)
		{
			answer = cannot(w, problem);
			break;
		}
		if (GetCurrentTimestamp() >= deadline)
		{
			if (problem)
				answer = cannot(w, problem);
			break;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 UPSTREAM_POLL_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	/* why outlives the poll's context: cannot() copied it into w */
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(poll);
	return answer;
}

/*
 * flusso_wait(name text, timeout interval DEFAULT '5s', searchable boolean
 * DEFAULT false, upstream_lsn pg_lsn DEFAULT NULL, subscription text
 * DEFAULT NULL) RETURNS boolean; before 0.10.0 the first three alone, and
 * strict.
 */
Datum
flusso_wait(PG_FUNCTION_ARGS)
{
	char	   *name;
	long		wait_ms;
	TimestampTz deadline;
	bool		upstream = PG_NARGS() > 3 && !PG_ARGISNULL(3);
	char	   *subscription = NULL;
	Oid			owner;
	bool		opensearch;
	DatabaseEntry *entry;
	Waiter		w;
	WaitAnswer	answer;
	Oid			locked;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		PG_RETURN_NULL();
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	wait_ms = timeout_ms(PG_GETARG_INTERVAL_P(1));
	if (PG_NARGS() > 4 && !PG_ARGISNULL(4))
	{
		if (!upstream)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("flusso_wait() takes a subscription only with upstream_lsn"),
					 errhint("Pass the publisher's position the subscription is to have applied.")));
		subscription = text_to_cstring(PG_GETARG_TEXT_PP(4));
	}
	flusso_require_admin();
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("flusso_wait() cannot run during recovery"),
				 errhint("Call it on the primary, where the flusso worker runs.")));
	if (TransactionIdIsValid(GetTopTransactionIdIfAny()))
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("flusso_wait() cannot wait for the changes of its own transaction"),
				 errdetail("This transaction has written; its changes reach the index only once it commits."),
				 errhint("Call flusso_wait() after COMMIT.")));
	LWLockAcquire(flusso_shared->lock, LW_SHARED);
	entry = shared_database(MyDatabaseId, false);
	LWLockRelease(flusso_shared->lock);
	look_up(entry, name, &owner, &opensearch);
	flusso_require_reader(owner, name);
	/* no such subscription, or none to choose: refused before any wait */
	if (upstream)
		(void) upstream_find(subscription);

	memset(&w, 0, sizeof(w));
	w.index = name;
	w.opensearch = opensearch;
	w.searchable = PG_GETARG_BOOL(2) && opensearch;
	w.target = wait_target();
	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), wait_ms);

	if (entry == NULL)
	{
		answer = WAIT_CANNOT;
		strlcpy(w.why, "No flusso worker keeps this database up to date (see flusso_status()).",
				FLUSSO_ERROR_LEN);
	}
	else if (OidIsValid(locked = table_locked_against_worker(entry)))
	{
		char	   *table = get_rel_name(locked);

		answer = WAIT_CANNOT;
		snprintf(w.why, FLUSSO_ERROR_LEN,
				 "This transaction holds a lock on table %s that the flusso worker's writes wait for: no index of the database gets further until it ends.",
				 table ? quote_qualified_identifier(get_namespace_name(get_rel_namespace(locked)), table)
				 : "(dropped)");
	}
	else
	{
		/* a publisher's position: applied here first */
		answer = upstream ? wait_upstream(&w, subscription, PG_GETARG_LSN(3), deadline)
			: WAIT_DONE;
		if (answer == WAIT_DONE)
		{
			if (upstream)
				w.target = Max(w.target, flush_inserted());
			answer = wait_for(entry, &w, deadline);
		}
	}
	if (answer == WAIT_CANNOT)
		ereport(NOTICE,
				(errmsg("index \"%s\" cannot be waited for now", name),
				 errdetail_internal("%s", w.why)));
	PG_RETURN_BOOL(answer == WAIT_DONE);
}

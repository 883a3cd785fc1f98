/*-------------------------------------------------------------------------
 *
 * shipper.c
 *	  The "flusso shipper" background worker of a database: ships what the
 *	  OpenSearch sink queued, and keeps the OpenSearch indexes' generations
 *	  and aliases as flusso's catalog says.
 *
 * It runs beside the worker, never in its way: the worker only queues ids
 * in flusso.outbox and confirms its slot once they are committed, so a
 * slow, failing or unreachable cluster delays neither decoding nor the
 * table sink, and an outage grows the outbox (one row per document at
 * most), never pg_wal.  The launcher starts it when a sink asks for it;
 * it ends once no index has an OpenSearch sink and no generation is left
 * to delete.
 *
 * Each pass reads the catalog (or keeps what it read while that holds:
 * ship_catalog.c), then gives every index a turn: the steps its
 * generations need (generations.c), then one _bulk (ship.c).  They say
 * what they came to (ShipStatus) and this loop records it: a step
 * that fails puts that index alone in back-off (exponential with jitter,
 * from half a second to a minute, longer if OpenSearch asks so with
 * Retry-After) and says why in flusso_status(); the other indexes go on.
 * So does an error raised during a turn (a response or a document this
 * code did not foresee): it is caught there, the turn's transaction and
 * requests abandoned, and only that index backs off, rather than the
 * shipper exiting and every index waiting for its restart.
 * Between passes with nothing to do it sleeps on its latch, which the
 * worker sets once it has committed something to ship (requests.c), for a
 * second at most.  Requests are waited for with the latch too
 * (opensearch/http.c), which may reset it mid-pass: a pass that was asked
 * for meanwhile (shipper_requests moved) is followed by another at once,
 * so that no wake-up is lost.  SIGTERM and reloads are answered within a
 * second, even while a request hangs.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/pg_prng.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "access/xact.h"
#include "settings.h"
#include "util/attempt.h"
#include "util/pinned.h"
#include "util/xact.h"
#include "store/catalog_sink.h"
#include "ipc/shared.h"
#include "opensearch/http.h"
#include "shipper/generations.h"
#include "shipper/ship.h"
#include "shipper/ship_catalog.h"
#include "shipper/ship_flight.h"
#include "shipper/ship_wait.h"
#include "shipper/shipper.h"

/* the longest sleep between passes */
#define SHIP_NAPTIME_MS 1000
#define SHIP_BACKOFF_MIN_MS 500
/* how long a failed step waits before it is tried again, at most */
#define SHIP_BACKOFF_MAX_MS 60000

static DatabaseEntry *my_entry = NULL;
static HTAB *runtimes = NULL;

/*
 * The shipper exits.  If it does to end a build that would not end when
 * canceled (util/attempt.c), the next shipper stops that index's shipping
 * first (stop_overran_index), or it would be held as long.
 */
static void
forget_shipper(int code, Datum arg)
{
	const char *overran = attempt_overran() ? ship_index_building() : NULL;

	if (overran)
		ereport(LOG,
				(errmsg("flusso shipper: index \"%s\": building documents to ship ran past flusso.build_timeout (%d ms) and would not end when canceled: the shipper exits to end it, and the index's shipping is stopped",
						overran, flusso_build_timeout)));
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	if (my_entry->shipper_pid == MyProcPid)
	{
		my_entry->shipper_pid = 0;
		my_entry->shipper_latch = NULL;
	}
	if (overran)
		strlcpy(my_entry->shipper_overran, overran, NAMEDATALEN);
	LWLockRelease(flusso_shared->lock);
	shared_wake_launcher();
}

/*
 * The last shipper exited to end a build of index shipper_overran names:
 * its shipping is stopped, saying why, until flusso_retry_rejected() lets
 * it ship again (as for on_error 'stop').
 */
static void
stop_overran_index(void)
{
	char		index[NAMEDATALEN];

	LWLockAcquire(flusso_shared->lock, LW_SHARED);
	strlcpy(index, my_entry->shipper_overran, NAMEDATALEN);
	LWLockRelease(flusso_shared->lock);
	if (index[0] == '\0' || !xact_begin(true, NULL, 0))
		return;
	catalog_stop_shipping(index,
						  psprintf("building documents to ship ran past flusso.build_timeout (%d ms) and would not end when canceled (a function the index's definition calls catches the cancel), so the shipper exited to end it; shipping is stopped: fix the definition, then call flusso_retry_rejected('%s')",
								   flusso_build_timeout, index));
	xact_commit();
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	if (strcmp(my_entry->shipper_overran, index) == 0)
		my_entry->shipper_overran[0] = '\0';
	LWLockRelease(flusso_shared->lock);
}

/* Answer a reload, even in the middle of a request. */
static void
answer_reload(void)
{
	if (ConfigReloadPending)
	{
		ConfigReloadPending = false;
		ProcessConfigFile(PGC_SIGHUP);
		ship_catalog_forget();
	}
}

static ShipRuntime *
runtime_of(const char *index)
{
	char		key[NAMEDATALEN];
	ShipRuntime *rt;
	bool		found;

	strlcpy(key, index, NAMEDATALEN);
	rt = hash_search(runtimes, key, HASH_ENTER, &found);
	if (!found)
	{
		rt->not_before = 0;
		rt->failures = 0;
		rt->items_cap = 0;
		rt->checked_at = 0;
		rt->settled = -1;
		rt->settled_settings = NULL;
		rt->settle_failed_at = 0;
		rt->remap_refused = 0;
		rt->emptying = -1;
		rt->emptying_scroll = NULL;
		memset(&rt->pace, 0, sizeof(BuildPace));
		rt->wait_lsn = InvalidXLogRecPtr;
		rt->wait_at = 0;
	}
	return rt;
}

/*
 * A step for index failed: back off, half a second doubling with every
 * failure in a row up to a minute, with jitter, and no less than what a
 * Retry-After asked for; and say why in flusso_status().
 */
static void
record_failure(ShipRuntime *rt, const char *index, const char *message, int retry_after_s)
{
	long		delay_ms = Min((long) SHIP_BACKOFF_MAX_MS,
							   (long) SHIP_BACKOFF_MIN_MS << Min(rt->failures, 10));

	rt->failures++;
	delay_ms = delay_ms / 2 + (long) (pg_prng_double(&pg_global_prng_state) * (delay_ms / 2));
	if (retry_after_s > 0)
		delay_ms = Max(delay_ms, Min((long) retry_after_s, 600L) * 1000L);
	rt->not_before = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), delay_ms);
	if (rt->failures == 1 || rt->failures % 10 == 0)
		ereport(LOG,
				(errmsg("flusso shipper: index \"%s\": %s", index, message),
				 errdetail("Failure %d in a row; trying again in %ld ms.", rt->failures, delay_ms)));
	ship_record_error(index, message);
}

/*
 * Record what a turn of index came to (see ShipStatus): what the pass
 * read is dropped if a step changed the catalog, a bulk that went through
 * ends the back-off, then every failure backs off again.
 */
static void
record_status(ShipRuntime *rt, const char *index, const ShipStatus *status)
{
	ListCell   *lc;

	if (status->reread)
		ship_catalog_forget();
	if (status->went_through)
	{
		rt->failures = 0;
		rt->not_before = 0;
	}
	/* not a failure to back off from: looked at again in a while */
	if (status->conflict)
		rt->not_before = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), SHIP_CHECK_MS);
	foreach(lc, status->failures)
	{
		ShipFailure *failure = lfirst(lc);

		record_failure(rt, index, failure->message, failure->retry_after_s);
	}
}

/*
 * No sink and no generation left: end, unless someone asked for the
 * shipper since the pass began (requests counts the asks).
 */
static bool
may_end(uint64 requests)
{
	bool		end;

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	end = my_entry->shipper_requests == requests;
	if (end)
		my_entry->shipper_wanted = false;
	LWLockRelease(flusso_shared->lock);
	return end;
}

/*
 * One turn of index x: its generations' steps, then one _bulk; what they
 * came to goes into *status.
 */
static bool
take_turn(ShipIndex *x, ShipRuntime *rt, ShipStatus *status)
{
	if (x->live && x->server == NULL)
	{
		ship_status_failed(status,
						   psprintf("server \"%s\" does not exist, or is not a flusso_opensearch server",
									x->server_name), -1);
		return false;
	}
	if (x->live && !x->usable)
	{
		ship_status_failed(status,
						   psprintf("role %s, the index's owner, may not use server \"%s\"",
									x->owner_name, x->server_name), -1);
		return false;
	}
	if (!ship_generations(x, rt, status))
		return true;
	if (x->live && x->stopped == NULL && x->conflict == NULL && ship_is_ready(x))
		return ship_bulk(x, rt, status);
	return false;
}

typedef struct Turn
{
	ShipIndex  *index;
	ShipRuntime *runtime;
	ShipStatus	status;			/* what the turn came to, until it raised */
	bool		worked;
} Turn;

static void
run_turn(void *arg)
{
	Turn	   *turn = arg;

	turn->worked = take_turn(turn->index, turn->runtime, &turn->status);
}

/*
 * take_turn(x) unless x backs off, whatever it raises caught, and what it
 * came to recorded.  An ERROR fails x's turn alone: it is logged, the
 * transaction and the requests in flight are abandoned (their memory is
 * the pass's), and x backs off with the error in its status, reduced to
 * its SQLSTATE when it may quote a value, after what the turn came to
 * before it.
 */
static bool
take_turn_alone(ShipIndex *x, ShipRuntime *rt)
{
	Turn		turn = {x, rt, {false, NIL, false, false}, false};
	ErrorData  *error;
	bool		ended;

	if (turn.runtime->not_before > GetCurrentTimestamp())
		return false;
	ended = attempt_outside_transaction(run_turn, &turn, &error);
	if (!ended)
		http_abandon_all();
	record_status(turn.runtime, x->name, &turn.status);
	if (ended)
		return turn.worked;
	record_failure(turn.runtime, x->name,
				   psprintf("the shipper's turn failed: %s", attempt_message_for_status(error)),
				   -1);
	return true;
}

static void
run_answer(void *arg)
{
	Turn	   *turn = arg;

	ship_answer_waiters(turn->index, turn->runtime, my_entry);
}

/*
 * After x's turn, taken or backed off from: what flusso_wait() learns of
 * it (ship_wait.c).  An error is logged and left for the next turn: the
 * sessions that wait meanwhile wait on.
 */
static void
answer_waiters(ShipIndex *x, ShipRuntime *rt)
{
	Turn		turn = {x, rt, {false, NIL, false, false}, false};
	ErrorData  *error;

	if (!attempt_outside_transaction(run_answer, &turn, &error))
	{
		http_abandon_all();
		ereport(LOG,
				(errmsg("flusso shipper: index \"%s\": could not tell the sessions that wait how far it shipped: %s",
						x->name, attempt_message_for_status(error))));
	}
}

/* Was the shipper asked for since the pass began (requests counts the asks)? */
static bool
asked_since(uint64 requests)
{
	bool		asked;

	LWLockAcquire(flusso_shared->lock, LW_SHARED);
	asked = my_entry->shipper_requests != requests;
	LWLockRelease(flusso_shared->lock);
	return asked;
}

/* Until the earliest back-off ends, at most SHIP_NAPTIME_MS. */
static long
nap_ms(List *indexes)
{
	TimestampTz now = GetCurrentTimestamp();
	long		nap = SHIP_NAPTIME_MS;
	ListCell   *lc;

	foreach(lc, indexes)
	{
		ShipRuntime *rt = runtime_of(((ShipIndex *) lfirst(lc))->name);

		if (rt->not_before > now)
			nap = Min(nap, TimestampDifferenceMilliseconds(now, rt->not_before) + 1);
	}
	return nap;
}

static void
run(void)
{
	MemoryContext pass_context = AllocSetContextCreate(TopMemoryContext, "flusso shipper pass",
													   ALLOCSET_DEFAULT_SIZES);

	stop_overran_index();
	for (;;)
	{
		List	   *indexes;
		uint64		requests;
		bool		worked = false;
		ListCell   *lc;

		CHECK_FOR_INTERRUPTS();
		answer_reload();
		LWLockAcquire(flusso_shared->lock, LW_SHARED);
		requests = my_entry->shipper_requests;
		LWLockRelease(flusso_shared->lock);

		MemoryContextReset(pass_context);
		MemoryContextSwitchTo(pass_context);
		if (!ship_load(my_entry, &indexes))
		{
			ereport(LOG, (errmsg("flusso shipper stopping: the extension was dropped")));
			(void) may_end(requests);
			return;
		}
		if (indexes == NIL && may_end(requests))
		{
			ereport(LOG, (errmsg("flusso shipper stopping: no index ships to OpenSearch")));
			return;
		}
		pgstat_report_activity(STATE_RUNNING, "shipping");
		foreach(lc, indexes)
		{
			ShipIndex  *x = lfirst(lc);
			ShipRuntime *rt = runtime_of(x->name);

			worked |= take_turn_alone(x, rt);
			answer_waiters(x, rt);
		}
		/* a pass went through: the shipper is not failing at start */
		LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
		my_entry->shipper_failures = 0;
		LWLockRelease(flusso_shared->lock);
		if (!worked && !asked_since(requests))
		{
			pgstat_report_activity(STATE_IDLE, NULL);
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 nap_ms(indexes), PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
		}
	}
}

/* Entry point of "flusso shipper"; arg is the database's entry index. */
void
flusso_shipper_main(Datum arg)
{
	HASHCTL		ctl;
	Oid			dboid;

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	my_entry = &flusso_shared->databases[DatumGetInt32(arg)];
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	dboid = my_entry->dboid;
	my_entry->shipper_pid = MyProcPid;
	my_entry->shipper_latch = MyLatch;
	LWLockRelease(flusso_shared->lock);
	before_shmem_exit(forget_shipper, (Datum) 0);

	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	/* it builds documents as the worker does, on their owners' behalf */
	pinned_settings_for_process();
	SetConfigOption("jit", "off", PGC_SUSET, PGC_S_OVERRIDE);
	http_wait_callback = answer_reload;
	http_init_process();
	ship_watch_start();

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = NAMEDATALEN;
	ctl.entrysize = sizeof(ShipRuntime);
	runtimes = hash_create("flusso shipper indexes", 16, &ctl, HASH_ELEM | HASH_STRINGS);

	run();
	proc_exit(0);
}

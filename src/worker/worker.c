/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The per-database worker: owns the database's slot, decodes batches of
 *	  changes, applies them, and only then confirms the slot.
 *
 * One worker per database, started by the launcher; the slot is acquired
 * exclusively, so two workers can never consume it.  Before reading
 * anything the worker creates the slot if it is missing (reporting
 * "waiting for a consistent point" while older transactions hold that up),
 * and re-creates it if it was invalidated: then changes may have been lost,
 * which is reported loudly and every index is marked for re-seeding
 * (slot_record.c).
 *
 * Each turn of the loop, in a memory context reset at its top (what must
 * last longer is allocated in the worker's context, or in one of its
 * children, explicitly): see whether the worker must stop (asked to, the
 * extension or the last index gone, a definition changed), retry an index
 * in error, advance a seed, decode up to flusso.batch_size changes or
 * flusso.batch_timeout, resolve them into the documents the indexes owe
 * (after waiting for every committed transaction of the batch to be
 * visible), build those once due (catchup.c), confirm the slot up to the
 * reader's position once nothing is owed, and sleep on the latch when
 * caught up.
 * Waiting costs little: a worker that has read all the flushed WAL polls
 * for more soon after WAL arrived, less and less often while none does, up
 * to every flusso.naptime (nap.c), and reads the catalog (definitions, the
 * publication an index waits for, an index in error) only when it may have
 * changed (catalog_watch.c), not on a timer.
 * Only the loop ends the worker; what it calls returns.  An error ends the
 * worker after recording it; the launcher starts it again, and nothing
 * applied in the failed batch was confirmed.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"

#include "cdc/decode.h"
#include "util/attempt.h"
#include "util/pinned.h"
#include "util/xact.h"
#include "settings.h"
#include "store/catalog_signal.h"
#include "engine/seed.h"
#include "source/source.h"
#include "engine/engine_stream.h"
#include "ipc/change_count.h"
#include "ipc/shared.h"
#include "store/catalog_index.h"
#include "worker/catalog_watch.h"
#include "worker/catchup.h"
#include "worker/nap.h"
#include "worker/slot_record.h"
#include "ipc/strikes.h"
#include "worker/worker.h"

/*
 * How often an index in error is compiled and prepared again, catalog
 * change or not: what isolated it may have been data or a passing error
 * (a lock timeout), which no invalidation announces.  Only while an index
 * is in error.
 */
#define RETRY_BROKEN_MS 10000

/*
 * How often the worker makes sure its database has not become a copy of
 * another one behind its back (a dump restored into it while it ran, its
 * rows of flusso.source coming last): a look at a one-row table, on top
 * of every time the catalog may have changed.
 */
#define SOURCE_CHECK_MS 10000

/* Why the worker ends. */
typedef enum WorkerExit
{
	WORKER_GOES_ON,
	WORKER_STOPS,				/* asked to (DROP DATABASE): keep the slot */
	WORKER_DROPS_SLOT,			/* no index left: drop the slot */
	WORKER_EXTENSION_GONE,		/* the extension was dropped: drop the slot */
	WORKER_RESTARTS				/* compile the indexes again: keep the slot */
} WorkerExit;

/* Everything the worker holds, for as long as it runs. */
typedef struct WorkerState
{
	DatabaseEntry *entry;		/* its shared memory */
	MemoryContext context;		/* lives as long as the worker */
	MemoryContext turn_context; /* one turn of the loop: reset at its top */
	char	   *database;
	char	   *slot_name;
	char	   *publication;	/* flusso.publication when started */
	Engine	   *engine;			/* the indexes, compiled */
	Seeder	   *seeder;			/* seeds the indexes that need it */
	ChangeBatch *batch;
	CaptureStream *stream;		/* decoding, once the slot is open */
	char	   *restart_reason; /* set: compile the indexes again */
	CatalogWatch catalog;		/* when the catalog may have changed */
	uint64		replaced_seen;	/* system catalog changes when tables were
								 * last looked at for replacement */
	Catchup		catchup;		/* the documents owed, and how they are built */
	TimestampTz broken_tried_at;
	TimestampTz source_checked_at;
	WorkerNap	nap;			/* how long it sleeps when caught up */
} WorkerState;

static DatabaseEntry *my_entry = NULL;	/* for the exit callback */

static void
set_state(DatabaseEntry *entry, const char *state)
{
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	strlcpy(entry->state, state, sizeof(entry->state));
	LWLockRelease(flusso_shared->lock);
	pgstat_report_activity(STATE_RUNNING, state);
}

static void
report_waiting(void)
{
	set_state(my_entry, "waiting for a consistent point");
}

/*
 * The worker exits.  One that exits to end a build that would not end when
 * canceled (util/attempt.c; strikes.c sets the index aside) is started
 * again at once, as for changed indexes: the other indexes wait no more.
 */
static void
forget_worker(int code, Datum arg)
{
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	if (my_entry->worker_pid == MyProcPid)
	{
		my_entry->worker_pid = 0;
		my_entry->worker_latch = NULL;
		my_entry->caught_up = false;
		my_entry->streaming = false;
		strlcpy(my_entry->state, "stopped", sizeof(my_entry->state));
	}
	if (attempt_overran())
		my_entry->restart_now = true;
	LWLockRelease(flusso_shared->lock);
	/* no session waits for a worker that is gone (api/wait.c) */
	shared_progress_made(my_entry);
	shared_wake_launcher();
}

/*
 * Does the database still have flusso and at least one index?  Refreshes
 * the index list of the status on the way, and notes when a definition
 * changed since the engine was compiled.
 */
static bool
database_wants_worker(WorkerState *ws, bool starting)
{
	bool		wanted = false;
	List	   *names = NIL;

	(void) xact_begin(false, NULL, 0);
	if (OidIsValid(get_extension_oid("flusso", true)))
	{
		names = catalog_index_names();
		wanted = names != NIL;
		SPI_connect();
		if (ws->engine && !engine_is_current(ws->engine))
			ws->restart_reason = "the indexes changed";
		LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
		if (starting)
			ws->entry->nindexes = 0;
		shared_list_indexes(ws->entry, names);
		LWLockRelease(flusso_shared->lock);
		SPI_finish();
	}
	xact_commit();
	return wanted;
}

/*
 * What flusso_status() shows of the stream.  caught_up: this turn read all
 * the WAL that was flushed when it began, and applied it.  The rate its
 * time to catch up is estimated from is measured since the worker was
 * last caught up (util/rate.c).
 */
static void
publish_progress(WorkerState *ws, bool caught_up)
{
	TimestampTz now = GetCurrentTimestamp();
	DatabaseEntry *entry = ws->entry;

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry->confirmed_lsn = ws->stream->confirmed;
	/* the oldest commit read that no index owes yet (each its own after) */
	entry->oldest_unresolved = ws->batch->oldest_commit;
	entry->caught_up = caught_up;
	entry->resolved_lsn = cdc_position(ws->stream);
	entry->documents_owed = engine_owed_count(ws->engine);
	if (caught_up)
	{
		entry->caught_up_at = now;
		rate_restart(&entry->resolve_rate, now, entry->resolved_lsn);
	}
	else
		rate_note(&entry->resolve_rate, now, entry->resolved_lsn);
	LWLockRelease(flusso_shared->lock);
}

/*
 * Must the worker end?  The requests in shared memory are looked at every
 * turn; the catalog (does the extension, does an index still exist, did a
 * definition change?) when look says so: when it may have changed, and
 * when the batch in hand was made after the indexes changed (catchup.c
 * checks that in the batch's own transaction).
 */
static WorkerExit
next_exit(WorkerState *ws, bool look)
{
	bool		drop;
	bool		stop;

	LWLockAcquire(flusso_shared->lock, LW_SHARED);
	drop = ws->entry->drop_requested;
	stop = ws->entry->stop_requested;
	LWLockRelease(flusso_shared->lock);

	if (stop)
		return WORKER_STOPS;
	if (drop)
		return WORKER_DROPS_SLOT;
	if (ws->restart_reason)
		return WORKER_RESTARTS;
	if (!look)
		return WORKER_GOES_ON;
	if (!database_wants_worker(ws, false))
		return WORKER_DROPS_SLOT;
	return ws->restart_reason ? WORKER_RESTARTS : WORKER_GOES_ON;
}

/*
 * While an index is in error, see whether it builds again (its table or
 * column is back, its owner granted what it lacked: flusso_check() is
 * clean) when the catalog may have changed (look), and every ten seconds.
 * If so, the worker restarts: the new engine seeds it, since the changes
 * it skipped are lost to it.
 */
static void
retry_broken(WorkerState *ws, bool look)
{
	TimestampTz now;

	if (!engine_any_broken(ws->engine))
		return;
	now = GetCurrentTimestamp();
	if (!look && !TimestampDifferenceExceeds(ws->broken_tried_at, now, RETRY_BROKEN_MS))
		return;
	ws->broken_tried_at = now;
	if (!xact_begin(true, NULL, 0))
		return;
	if (engine_retry_broken(ws->engine))
		ws->restart_reason = "an index in error builds again and will be seeded";
	xact_commit();
}

/*
 * Make sure the database has its own identity (source/source.c), when the
 * catalog may have changed (look) and every SOURCE_CHECK_MS.  True when
 * it turned out to be a copy of another database, which is said in the
 * log and in flusso_status(): the copy was taken in, its indexes are to
 * be seeded again.
 */
static bool
claim_source(WorkerState *ws, bool look)
{
	TimestampTz now = GetCurrentTimestamp();
	SourceIdentity identity;
	char	   *message;
	bool		copied;

	if (!look && !TimestampDifferenceExceeds(ws->source_checked_at, now, SOURCE_CHECK_MS))
		return false;
	ws->source_checked_at = now;
	if (!xact_begin(true, NULL, 0))
		return false;
	copied = source_claim(&identity, ws->turn_context, &message);
	xact_commit();
	if (copied)
	{
		ereport(LOG, (errmsg("flusso worker for database \"%s\": %s", ws->database, message)));
		LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
		shared_record_error(ws->entry, message);
		LWLockRelease(flusso_shared->lock);
	}
	return copied;
}

/*
 * When the catalog may have changed (look), has a table an index reads
 * been replaced under its name (engine_replaced_tables)?  Then a
 * 'replaced' request for the index goes into flusso.signal: in stream
 * order, the index is compiled against what its names read now, and
 * seeded once the publication covers every table it reads, in phase error
 * until then (engine/signals.c).  A change the old engine skipped (the
 * new table's, under another OID) is in that seed.
 */
static void
notice_replaced(WorkerState *ws, bool look)
{
	List	   *names;

	if (!look || !xact_begin(true, NULL, 0))
		return;
	names = engine_replaced_tables(ws->engine);
	if (names != NIL)
		catalog_request_seeds(SIGNAL_REPLACED, names);
	xact_commit();
}

/*
 * Before the worker publishes how far each index's sinks got, which
 * flusso_wait() takes at its word: has a table an index reads been
 * replaced under its name since it last looked?  Looked at whenever the
 * catalog may have changed since, however recently it looked: a swap
 * committed before a session's wait began has sent its invalidations by
 * then, and the worker reads them here, after decoding past that wait's
 * position.  An index found so publishes nothing more until it is
 * compiled against its new tables and seeded from them.
 */
static void
notice_replaced_before_publishing(WorkerState *ws)
{
	uint64		seen = change_count(ws->entry);

	if (seen == ws->replaced_seen)
		return;
	ws->replaced_seen = seen;
	notice_replaced(ws, true);
}

/*
 * The last workers died while no index was in hand (strikes.c): wait
 * before starting again, twice as long each time, up to a minute, so that
 * a worker that crashes the cluster does not do so in a tight loop.
 */
static void
back_off(WorkerState *ws)
{
	int			deaths = strikes_unattributed();
	long		delay_ms;
	char	   *cause;
	char	   *message;
	TimestampTz until;

	if (deaths == 0)
		return;
	delay_ms = Min(1000L << Min(deaths - 1, 6), 60000L);
	LWLockAcquire(flusso_shared->lock, LW_SHARED);
	cause = pstrdup(ws->entry->exit_error);
	LWLockRelease(flusso_shared->lock);
	/* what stops it, first: flusso_status() shows this */
	if (cause[0])
		message = psprintf("%s (the worker failed %d times in a row; it starts again in %ld s)",
						   cause, deaths, delay_ms / 1000);
	else
		message = psprintf("the worker stopped unexpectedly %d times in a row; waiting %ld s before starting again",
						   deaths, delay_ms / 1000);
	ereport(LOG, (errmsg("flusso worker for database \"%s\": %s", ws->database, message)));
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	shared_record_error(ws->entry, message);
	LWLockRelease(flusso_shared->lock);
	set_state(ws->entry, "backing off");
	/* the latch is set for other reasons too: wait out the whole delay */
	until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), delay_ms);
	for (;;)
	{
		long		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), until);

		if (left <= 0)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 left, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Everything before the loop: the slot (created, or recreated when it was
 * lost), the engine, and the stream, which last as long as the worker, in
 * its context.  Anything but WORKER_GOES_ON when the database no longer
 * wants a worker.
 */
static WorkerExit
start_up(WorkerState *ws)
{
	bool		existed;
	SlotState	slot_state;
	MemoryContext previous;

	(void) xact_begin(false, NULL, 0);
	ws->database = MemoryContextStrdup(ws->context, get_database_name(MyDatabaseId));
	xact_commit();
	/* what changes from here on is looked at by the loop */
	catalog_watch_reset(&ws->catalog, ws->entry);
	if (!database_wants_worker(ws, true))
		return WORKER_STOPS;
	/* a copy forgets the slot record of the database it was copied from */
	(void) claim_source(ws, true);
	back_off(ws);

	existed = slot_record_exists();
	slot_state = cdc_prepare_slot(ws->slot_name, report_waiting);
	if (slot_state == SLOT_RECREATED || (slot_state == SLOT_CREATED && existed))
		slot_record_lost(ws->entry, ws->slot_name);
	if (slot_state != SLOT_READY)
		slot_record_save(ws->slot_name);

	if (!xact_begin(true, NULL, 0))
		return WORKER_EXTENSION_GONE;
	/* the engine, the stream and what they hold live as long as the worker */
	previous = MemoryContextSwitchTo(ws->context);
	ws->engine = engine_load(ws->publication);
	MemoryContextSwitchTo(previous);
	ws->seeder = seed_create(ws->engine, ws->publication, ws->context);
	seed_mark_resumable(ws->seeder);
	xact_commit();
	engine_report_phases(ws->engine);
	seed_forget_watermarks();

	ws->batch = batch_create(ws->context, (Size) flusso_work_mem * 1024);
	catchup_init(&ws->catchup);
	ws->batch->signal_relid = engine_signal_relid(ws->engine);
	previous = MemoryContextSwitchTo(ws->context);
	ws->stream = cdc_open(ws->slot_name, engine_plugin_options(ws->engine), ws->batch);
	MemoryContextSwitchTo(previous);
	set_state(ws->entry, "streaming");
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	ws->entry->streaming = true;
	ws->entry->restarting = false;
	ws->entry->failures = 0;
	ws->entry->exit_error[0] = '\0';
	/* after a restart, the shipper has what was queued before it */
	if (engine_ships(ws->engine))
	{
		ws->entry->shipper_wanted = true;
		ws->entry->shipper_requests++;
	}
	LWLockRelease(flusso_shared->lock);
	if (engine_ships(ws->engine))
		shared_wake_shipper(ws->entry);
	return WORKER_GOES_ON;
}

/* A change of flusso.publication: the decoding context has the old name. */
static void
reload_configuration(WorkerState *ws)
{
	ConfigReloadPending = false;
	ProcessConfigFile(PGC_SIGHUP);
	if (strcmp(ws->publication, flusso_publication) != 0)
		ws->restart_reason = "flusso.publication changed";
}

/* Let go of the slot as the exit requires, and say why the worker ends. */
static void
shut_down(WorkerState *ws, WorkerExit exit)
{
	bool		drop = exit == WORKER_DROPS_SLOT || exit == WORKER_EXTENSION_GONE;

	if (exit == WORKER_DROPS_SLOT)
		slot_record_forget();
	if (ws->stream)
		cdc_close(ws->stream, drop);
	else if (drop)
		cdc_drop_slot(ws->slot_name);
	switch (exit)
	{
		case WORKER_STOPS:
			ereport(LOG, (errmsg("flusso worker for database \"%s\" stopping", ws->database)));
			break;
		case WORKER_DROPS_SLOT:
			ereport(LOG,
					(errmsg("flusso worker for database \"%s\" stopping and dropping its slot: no index is left",
							ws->database)));
			break;
		case WORKER_EXTENSION_GONE:
			ereport(LOG,
					(errmsg("flusso worker for database \"%s\" stopping and dropping its slot: the extension was dropped",
							ws->database)));
			break;
		case WORKER_RESTARTS:
			ereport(LOG,
					(errmsg("flusso worker for database \"%s\" restarting: %s",
							ws->database, ws->restart_reason)));
			LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
			ws->entry->restart_now = true;
			ws->entry->restarting = true;
			LWLockRelease(flusso_shared->lock);
			break;
		case WORKER_GOES_ON:
			break;
	}
}

/*
 * The worker's loop, top to bottom; the one place that decides when it
 * ends.  Called in the turn context, which start_up() uses as the first
 * turn's.
 */
static void
run(WorkerState *ws)
{
	WorkerExit	exit = start_up(ws);

	while (exit == WORKER_GOES_ON)
	{
		bool		more;
		bool		look;
		bool		rewritten;

		/* what the last turn allocated, its transactions' included */
		MemoryContextReset(ws->turn_context);
		MemoryContextSwitchTo(ws->turn_context);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
			reload_configuration(ws);
		/* next_exit, retry_broken and seed_step read the catalog */
		look = catalog_watch_due(&ws->catalog, ws->entry);
		if ((exit = next_exit(ws, look)) != WORKER_GOES_ON)
			break;
		if (claim_source(ws, look))
		{
			ws->restart_reason = "the database turned out to be a copy of another one";
			exit = WORKER_RESTARTS;
			break;
		}
		retry_broken(ws, look);
		notice_replaced(ws, look);
		seed_step(ws->seeder, look);

		more = cdc_read(ws->stream, flusso_batch_size, flusso_batch_timeout);
		strikes_healthy();
		if (!batch_is_empty(ws->batch))
		{
			CatchupResult result;

			publish_progress(ws, false);
			result = catchup_resolve(&ws->catchup, ws->entry, ws->engine, ws->batch,
									 ws->seeder, ws->turn_context, &rewritten);
			if (result == CATCHUP_EXTENSION_GONE)
			{
				exit = WORKER_EXTENSION_GONE;
				break;
			}
			if (result == CATCHUP_STALE)
			{
				/* the indexes changed before the batch: which exit, the catalog says */
				exit = next_exit(ws, true);
				if (exit == WORKER_GOES_ON)
				{
					ws->restart_reason = "the indexes changed";
					exit = WORKER_RESTARTS;
				}
				break;
			}
			/* a table was rewritten or altered: it may read differently now */
			if (rewritten)
				ws->restart_reason = "a table an index reads was rewritten or altered";
			batch_reset(ws->batch);
		}
		if (catchup_build_due(&ws->catchup, ws->engine, more, ws->stream,
							  seed_running(ws->seeder)) &&
			!catchup_build(&ws->catchup, ws->entry, ws->engine))
		{
			exit = WORKER_EXTENSION_GONE;
			break;
		}
		/* past changes whose documents are written, and no further */
		if (!engine_has_owed(ws->engine))
			cdc_confirm(ws->stream, cdc_position(ws->stream), flusso_slot_save_interval);
		else
			cdc_confirm(ws->stream, ws->stream->confirmed, flusso_slot_save_interval);
		publish_progress(ws, !more && !engine_has_owed(ws->engine));
		/* what every index's sinks hold now, for flusso_wait() */
		notice_replaced_before_publishing(ws);
		engine_publish_progress(ws->engine, cdc_position(ws->stream));

		/*
		 * A seed ready for its next step does not wait, nor do documents
		 * due to be built that a round left owed.  Otherwise sleep until
		 * the latch is set (a request, a drop, a stop) or the nap ends:
		 * nothing wakes a decoding process outside a walsender when WAL is
		 * flushed, so new WAL is polled for, soon after some arrived
		 * (nap.c); and the catalog is looked at when that poll finds it
		 * may have changed.
		 */
		if (!more && !seed_due(ws->seeder) &&
			!catchup_build_due(&ws->catchup, ws->engine, false, ws->stream,
							   seed_running(ws->seeder)))
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 nap_length(&ws->nap, cdc_position(ws->stream)),
							 PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
		}
	}
	shut_down(ws, exit);
}

/* Entry point of "flusso worker"; arg is the database's entry index. */
void
flusso_worker_main(Datum arg)
{
	WorkerState ws;
	Oid			dboid;
	MemoryContext caller;

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	memset(&ws, 0, sizeof(ws));
	nap_init(&ws.nap);
	ws.entry = my_entry = &flusso_shared->databases[DatumGetInt32(arg)];
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	dboid = ws.entry->dboid;
	ws.entry->worker_pid = MyProcPid;
	ws.entry->worker_latch = MyLatch;
	ws.entry->stop_requested = false;
	ws.entry->drop_requested = false;
	ws.entry->no_worker_slot = false;
	ws.entry->caught_up = false;
	ws.entry->streaming = false;
	ws.entry->resolve_rate.nsamples = 0;	/* measured anew */
	ws.entry->build_rate = 0;
	strlcpy(ws.entry->state, "starting", sizeof(ws.entry->state));
	LWLockRelease(flusso_shared->lock);
	before_shmem_exit(forget_worker, (Datum) 0);

	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	CurrentResourceOwner = ResourceOwnerCreate(NULL, "flusso worker");
	catalog_watch_start();
	/*
	 * Every statement of the worker runs on someone else's behalf, and its
	 * output plugin renders key values: no database or role default may
	 * choose its search_path or how values read (util/pinned.c).
	 */
	pinned_settings_for_process();
	/*
	 * Commit without waiting for the WAL flush, as PostgreSQL's own apply
	 * workers do: the slot is confirmed past a batch only once the commits
	 * that applied it are flushed (cdc_confirm), so a crash loses nothing
	 * the slot will not deliver again.  Waiting at every commit cost the
	 * worker a sixth of its CPU under a steady load, and a flush a batch
	 * beside the flushes of the writers it follows.
	 */
	SetConfigOption("synchronous_commit", "off", PGC_SUSET, PGC_S_OVERRIDE);
	/*
	 * Each statement runs once per batch or chunk, with new keys: compiling
	 * it costs more than it saves (189 ms of a 497 ms seed chunk measured).
	 */
	SetConfigOption("jit", "off", PGC_SUSET, PGC_S_OVERRIDE);
	strikes_open(dboid);

	ws.context = AllocSetContextCreate(TopMemoryContext, "flusso worker",
									   ALLOCSET_DEFAULT_SIZES);
	ws.turn_context = AllocSetContextCreate(ws.context, "flusso worker turn",
											ALLOCSET_DEFAULT_SIZES);
	ws.slot_name = MemoryContextAlloc(ws.context, NAMEDATALEN);
	snprintf(ws.slot_name, NAMEDATALEN, FLUSSO_SLOT_FORMAT, MyDatabaseId);
	ws.publication = MemoryContextStrdup(ws.context, flusso_publication);

	caller = MemoryContextSwitchTo(ws.turn_context);
	PG_TRY();
	{
		run(&ws);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		/* out of ErrorContext, where the error left us */
		MemoryContextSwitchTo(caller);
		edata = CopyErrorData();
		strikes_record_error();
		LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
		shared_record_error(ws.entry, attempt_message_for_status(edata));
		strlcpy(ws.entry->exit_error, ws.entry->last_error, FLUSSO_ERROR_LEN);
		LWLockRelease(flusso_shared->lock);
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(caller);
	proc_exit(0);
}

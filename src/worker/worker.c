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
 * which is reported loudly and every index is marked for re-seeding.
 *
 * Each turn of the loop: check the extension and its indexes still exist,
 * decode up to flusso.batch_size changes or flusso.batch_timeout, apply
 * them in one transaction (after waiting for every committed transaction
 * of the batch to be visible), confirm the slot up to the reader's
 * position, and sleep on the latch when caught up.  An error ends the
 * worker after recording it; the launcher starts it again, and nothing
 * applied in the failed batch was confirmed.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/xact.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "replication/slot.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "cdc/decode.h"
#include "common/attempt.h"
#include "common/pinned.h"
#include "flusso.h"
#include "sink/capture_log.h"
#include "snapshot/seed.h"
#include "worker/engine.h"
#include "worker/shared.h"
#include "worker/strikes.h"
#include "worker/worker.h"

static DatabaseEntry *my_entry = NULL;
static Engine *my_engine = NULL;	/* the indexes, compiled */
static char *my_database = NULL;	/* name, read once in a transaction */
static Seed *my_seed = NULL;	/* the seed in progress, if any */
static CaptureStream *my_stream = NULL; /* decoding, once the slot is open */

static void
set_state(const char *state)
{
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	strlcpy(my_entry->state, state, sizeof(my_entry->state));
	LWLockRelease(flusso_shared->lock);
	pgstat_report_activity(STATE_RUNNING, state);
}

static void
report_waiting(void)
{
	set_state("waiting for a consistent point");
}

/*
 * Share-lock the extension at the start of a transaction that reads or
 * writes flusso's tables, so that a concurrent DROP EXTENSION, which locks
 * the extension before anything else, waits for the transaction instead
 * of deadlocking with it.  If the extension was dropped meanwhile, drop
 * the slot and exit, as maybe_stop() would have.
 */
void
worker_lock_extension(void)
{
	Oid			extension = get_extension_oid("flusso", true);

	if (OidIsValid(extension))
	{
		LockDatabaseObject(ExtensionRelationId, extension, 0, AccessShareLock);
		if (get_extension_name(extension) != NULL)
			return;
	}
	AbortCurrentTransaction();
	if (my_stream)
		cdc_close(my_stream, true);
	ereport(LOG,
			(errmsg("flusso worker for database \"%s\" stopping and dropping its slot: the extension was dropped",
					my_database)));
	proc_exit(0);
}

static void
forget_worker(int code, Datum arg)
{
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	if (my_entry->worker_pid == MyProcPid)
	{
		my_entry->worker_pid = 0;
		my_entry->worker_latch = NULL;
		strlcpy(my_entry->state, "stopped", sizeof(my_entry->state));
	}
	LWLockRelease(flusso_shared->lock);
	shared_wake_launcher();
}

/*
 * Does the database still have flusso and at least one index?  Refreshes
 * the index list of the status on the way.
 */
static bool indexes_changed = false;	/* the engine must be reloaded */

static bool
database_wants_worker(bool starting)
{
	bool		wanted = false;
	List	   *names = NIL;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (OidIsValid(get_extension_oid("flusso", true)))
	{
		SPI_connect();
		if (SPI_execute("SELECT name FROM flusso.index ORDER BY name", true,
						FLUSSO_MAX_INDEXES) != SPI_OK_SELECT)
			elog(ERROR, "could not read flusso.index");
		wanted = SPI_processed > 0;
		if (my_engine && strcmp(engine_signature(), my_engine->signature) != 0)
			indexes_changed = true;
		for (uint64 i = 0; i < SPI_processed; i++)
			names = lappend(names, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
		LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
		if (starting)
			my_entry->nindexes = 0;
		shared_list_indexes(my_entry, names);
		LWLockRelease(flusso_shared->lock);
		SPI_finish();
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	return wanted;
}

/* The slot was lost: say so, and have every index seeded again. */
static void
report_lost_slot(const char *slot_name)
{
	char	   *message = psprintf("replication slot \"%s\" was missing or invalidated and has been created again; changes made meanwhile may be lost, so every index will be seeded again",
								   slot_name);

	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("%s", message)));
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	shared_record_error(my_entry, message);
	LWLockRelease(flusso_shared->lock);

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	SPI_connect();
	/* and from the start: the changes lost never reached any shadow */
	if (SPI_execute("UPDATE flusso.index SET needs_seed = true", false, 0) != SPI_OK_UPDATE ||
		SPI_execute("DELETE FROM flusso.seed", false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not mark flusso indexes for re-seeding");
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
}

/*
 * Did this database ever have a slot?  flusso.stream remembers its creation,
 * so a slot that is missing later was lost, not never made.
 */
static bool
slot_existed_before(void)
{
	bool		existed;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	SPI_connect();
	if (SPI_execute("SELECT 1 FROM flusso.stream", true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read flusso.stream");
	existed = SPI_processed > 0;
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	return existed;
}

static void
remember_slot(const char *slot_name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(slot_name)};

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	SPI_connect();
	if (SPI_execute_with_args("INSERT INTO flusso.stream (slot_name) VALUES ($1) "
							  "ON CONFLICT (slot_name) DO UPDATE SET created_at = pg_catalog.now()",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the flusso slot");
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
}

/*
 * The slot is about to be dropped on purpose: forget it was made, so that
 * the next worker creates one without taking it for lost.  Forgotten
 * first: a crash in between then costs a slot that is found and used, not
 * a false alarm.
 */
static void
forget_slot(void)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (OidIsValid(get_extension_oid("flusso", true)))
	{
		SPI_connect();
		if (SPI_execute("DELETE FROM flusso.stream", false, 0) != SPI_OK_DELETE)
			elog(ERROR, "could not forget the flusso slot");
		SPI_finish();
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
}

/* Test hook: crash once between a batch's commit and its confirmation. */
static void
maybe_crash_after_flush(void)
{
	struct stat st;

	if (flusso_test_crash_file == NULL || flusso_test_crash_file[0] == '\0')
		return;
	if (stat(flusso_test_crash_file, &st) != 0)
		return;
	unlink(flusso_test_crash_file);
	elog(PANIC, "flusso: crash injected between flush and confirm (%s)",
		 flusso_test_crash_file);
}

/*
 * Apply a batch in one transaction.  Every transaction it came from has
 * committed, but a commit is decoded before it leaves the proc array:
 * wait for each, so that what is read next sees its changes.
 */
static void
apply_batch(ChangeBatch *batch)
{
	int			nxids;
	TransactionId *xids = batch_xids(batch, &nxids);
	ThinChange	change;
	int64		applied = 0;
	List	   *signals = NIL;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	worker_lock_extension();
	for (int i = 0; i < nxids; i++)
		XactLockTableWait(xids[i], NULL, NULL, XLTW_None);
	PushActiveSnapshot(GetTransactionSnapshot());
	SPI_connect();

	if (flusso_capture_log)
	{
		batch_begin_scan(batch);
		while (batch_next(batch, &change))
		{
			if (change.relid != my_engine->signal_relid)
				capture_log_write(&change);
		}
	}
	applied = engine_apply(my_engine, batch, &signals);
	/* a table was rewritten: its columns may read differently now */
	if (seed_handle_signals(my_engine, &my_seed, signals))
		indexes_changed = true;

	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	maybe_crash_after_flush();

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	my_entry->changes_captured += batch->nreceived;
	my_entry->documents_written += applied;
	my_entry->batches++;
	LWLockRelease(flusso_shared->lock);
}

static void
publish_progress(CaptureStream *stream, ChangeBatch *batch)
{
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	my_entry->confirmed_lsn = stream->confirmed;
	my_entry->oldest_unapplied = batch->oldest_commit;
	LWLockRelease(flusso_shared->lock);
}

/*
 * Stop when asked to, dropping the slot when nothing needs it any more.
 * The requests in shared memory are looked at every turn; the catalog
 * (does the extension, does an index still exist?) before every batch that
 * has changes, and at least every second otherwise.
 */
static void
maybe_stop(CaptureStream *stream, bool batch_pending)
{
	static TimestampTz checked_at = 0;
	TimestampTz now = GetCurrentTimestamp();
	bool		drop;
	bool		stop;

	LWLockAcquire(flusso_shared->lock, LW_SHARED);
	drop = my_entry->drop_requested;
	stop = my_entry->stop_requested;
	LWLockRelease(flusso_shared->lock);

	if (!drop && !stop && !batch_pending &&
		!TimestampDifferenceExceeds(checked_at, now, 1000))
		return;
	checked_at = now;
	if (!drop && !stop && database_wants_worker(false) && !indexes_changed)
		return;
	if (indexes_changed && !drop && !stop)
	{
		/* a definition changed: start again with the new one */
		cdc_close(stream, false);
		ereport(LOG,
				(errmsg("flusso worker for database \"%s\" restarting: the indexes changed",
						my_database)));
		proc_exit(0);
	}
	if (!stop)
		forget_slot();
	cdc_close(stream, !stop);
	ereport(LOG,
			(errmsg("flusso worker for database \"%s\" stopping%s", my_database,
					stop ? "" : " and dropping its slot: no index is left")));
	proc_exit(0);
}

/* After loading: each index live, waiting to be seeded, or in error. */
static void
show_phases(void)
{
	ListCell   *lc;

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	foreach(lc, my_engine->indexes)
	{
		EngineIndex *ei = lfirst(lc);

		if (!ei->broken)
			shared_set_phase(my_entry, ei->index->name,
							 ei->needs_seed ? PHASE_SNAPSHOT : PHASE_LIVE, NULL);
	}
	LWLockRelease(flusso_shared->lock);
}

/*
 * With no seed running, begin one for an index that needs it.  When the
 * last attempt had to wait for the publication, look again at most four
 * times a second.
 */
static void
maybe_begin_seed(const char *publication)
{
	static TimestampTz waited_at = 0;
	TimestampTz now = GetCurrentTimestamp();

	if (my_seed || (waited_at != 0 && !TimestampDifferenceExceeds(waited_at, now, 250)) ||
		seed_candidate(my_engine) == NULL)
		return;
	my_seed = seed_begin(my_engine, publication);
	waited_at = my_seed ? 0 : now;
}

/*
 * Every ten seconds, see whether an index in error builds again (its
 * table or column is back, its filter fixed: flusso_check() is clean).
 * If so, start again: the new engine seeds it, since the changes it
 * skipped are lost to it.
 */
static void
maybe_retry_broken(CaptureStream *stream)
{
	static TimestampTz tried_at = 0;
	TimestampTz now = GetCurrentTimestamp();
	bool		repaired = false;
	ListCell   *lc;

	if (!TimestampDifferenceExceeds(tried_at, now, 10000))
		return;
	tried_at = now;
	foreach(lc, my_engine->indexes)
	{
		if (((EngineIndex *) lfirst(lc))->broken)
			break;
	}
	if (lc == NULL)
		return;
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	worker_lock_extension();
	PushActiveSnapshot(GetTransactionSnapshot());
	repaired = engine_retry_broken(my_engine);
	PopActiveSnapshot();
	CommitTransactionCommand();
	if (repaired)
	{
		cdc_close(stream, false);
		ereport(LOG,
				(errmsg("flusso worker for database \"%s\" restarting: an index in error builds again and will be seeded",
						my_database)));
		proc_exit(0);
	}
}

/*
 * The last workers died while no index was in hand (strikes.c): wait
 * before starting again, twice as long each time, up to a minute, so that
 * a worker that crashes the cluster does not do so in a tight loop.
 */
static void
back_off(void)
{
	int			deaths = strikes_unattributed();
	long		delay_ms;
	char	   *message;

	if (deaths == 0)
		return;
	delay_ms = Min(1000L << Min(deaths - 1, 6), 60000L);
	message = psprintf("the worker stopped unexpectedly %d times in a row; waiting %ld s before starting again",
					   deaths, delay_ms / 1000);
	ereport(LOG, (errmsg("flusso worker for database \"%s\": %s", my_database, message)));
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	shared_record_error(my_entry, message);
	LWLockRelease(flusso_shared->lock);
	set_state("backing off");
	/* the latch is set for other reasons too: wait out the whole delay */
	for (TimestampTz until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), delay_ms);;)
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

static void
run(void)
{
	char	   *slot_name = psprintf(FLUSSO_SLOT_FORMAT, MyDatabaseId);
	MemoryContext context = AllocSetContextCreate(TopMemoryContext, "flusso worker",
												  ALLOCSET_DEFAULT_SIZES);
	ChangeBatch *batch;
	CaptureStream *stream;
	List	   *options;
	SlotState	slot_state;
	char	   *publication;
	bool		existed = slot_existed_before();

	MemoryContextSwitchTo(context);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	my_database = MemoryContextStrdup(context, get_database_name(MyDatabaseId));
	CommitTransactionCommand();
	if (!database_wants_worker(true))
		proc_exit(0);
	back_off();

	slot_state = cdc_prepare_slot(slot_name, report_waiting);
	if (slot_state == SLOT_RECREATED || (slot_state == SLOT_CREATED && existed))
		report_lost_slot(slot_name);
	if (slot_state != SLOT_READY)
		remember_slot(slot_name);

	publication = pstrdup(flusso_publication);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	{
		/* the engine lives as long as the worker, not the transaction */
		MemoryContext old = MemoryContextSwitchTo(context);

		my_engine = engine_load(publication);
		seed_mark_resumable(my_engine);
		MemoryContextSwitchTo(old);
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	MemoryContextSwitchTo(context);
	options = my_engine->plugin_options;
	show_phases();
	seed_forget_watermarks();
	batch = batch_create(context, (Size) flusso_work_mem * 1024);
	batch->signal_relid = my_engine->signal_relid;
	stream = cdc_open(slot_name, options, batch);
	my_stream = stream;
	set_state("streaming");
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	my_entry->failures = 0;
	LWLockRelease(flusso_shared->lock);

	for (;;)
	{
		bool		more;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			if (strcmp(publication, flusso_publication) != 0)
			{
				/* the decoding context has the old name: start afresh */
				cdc_close(stream, false);
				ereport(LOG,
						(errmsg("flusso worker for database \"%s\" restarting: flusso.publication changed",
								my_database)));
				proc_exit(0);
			}
		}
		maybe_stop(stream, false);
		maybe_retry_broken(stream);
		maybe_begin_seed(publication);
		if (my_seed && my_seed->state == SEED_FINISH_DUE)
			seed_finish(&my_seed);
		if (my_seed && my_seed->state == SEED_CHUNK_DUE)
			seed_read_chunk(&my_seed);
		MemoryContextSwitchTo(context);

		more = cdc_read(stream, flusso_batch_size, flusso_batch_timeout);
		strikes_healthy();
		if (!batch_is_empty(batch))
		{
			maybe_stop(stream, true);
			publish_progress(stream, batch);
			apply_batch(batch);
			batch_reset(batch);
		}
		cdc_confirm(stream, cdc_position(stream), flusso_slot_save_interval);
		publish_progress(stream, batch);

		/* a seed ready for its next step does not wait */
		if (!more && !(my_seed && (my_seed->state == SEED_CHUNK_DUE ||
								   my_seed->state == SEED_FINISH_DUE)))
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 flusso_naptime, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
		}
	}
}

/* Entry point of "flusso worker"; arg is the database's entry index. */
void
flusso_worker_main(Datum arg)
{
	int			index = DatumGetInt32(arg);
	Oid			dboid;

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	my_entry = &flusso_shared->databases[index];
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	dboid = my_entry->dboid;
	my_entry->worker_pid = MyProcPid;
	my_entry->worker_latch = MyLatch;
	my_entry->stop_requested = false;
	my_entry->drop_requested = false;
	my_entry->no_worker_slot = false;
	strlcpy(my_entry->state, "starting", sizeof(my_entry->state));
	LWLockRelease(flusso_shared->lock);
	before_shmem_exit(forget_worker, (Datum) 0);

	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	CurrentResourceOwner = ResourceOwnerCreate(NULL, "flusso worker");
	/*
	 * Every statement of the worker runs on someone else's behalf, and its
	 * output plugin renders key values: no database or role default may
	 * choose its search_path or how values read (common/pinned.c).
	 */
	pinned_settings_for_process();
	/* acknowledged work must be on disk: commit locally before confirming */
	SetConfigOption("synchronous_commit", "local", PGC_SUSET, PGC_S_OVERRIDE);
	/*
	 * Each statement runs once per batch or chunk, with new keys: compiling
	 * it costs more than it saves (189 ms of a 497 ms seed chunk measured).
	 */
	SetConfigOption("jit", "off", PGC_SUSET, PGC_S_OVERRIDE);
	strikes_open(dboid);

	PG_TRY();
	{
		run();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(TopMemoryContext);
		edata = CopyErrorData();
		strikes_record_error();
		LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
		shared_record_error(my_entry, attempt_message_for_status(edata));
		LWLockRelease(flusso_shared->lock);
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/*
 * Entry point of "flusso probe": does this database have flusso and an
 * index?  Connects, looks, records the answer and exits.
 */
void
flusso_probe_main(Datum arg)
{
	int			index = DatumGetInt32(arg);
	bool		wanted = false;
	bool		has_extension;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	my_entry = &flusso_shared->databases[index];

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	my_entry->probe = false;
	my_entry->probed_at = GetCurrentTimestamp();
	LWLockRelease(flusso_shared->lock);

	BackgroundWorkerInitializeConnectionByOid(my_entry->dboid, InvalidOid, 0);
	pinned_settings_for_process();
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	has_extension = OidIsValid(get_extension_oid("flusso", true));
	if (has_extension)
	{
		SPI_connect();
		if (SPI_execute("SELECT 1 FROM flusso.index", true, 1) == SPI_OK_SELECT)
			wanted = SPI_processed > 0;
		SPI_finish();
	}
	PopActiveSnapshot();
	CommitTransactionCommand();

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	my_entry->wanted = wanted;
	my_entry->has_extension = has_extension;
	LWLockRelease(flusso_shared->lock);
	shared_wake_launcher();
	proc_exit(0);
}

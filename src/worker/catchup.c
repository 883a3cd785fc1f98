/*-------------------------------------------------------------------------
 *
 * catchup.c
 *	  What the worker does with a batch: resolve it into the documents the
 *	  indexes owe (engine/pending.c), act on the signals it ended with, and
 *	  build what is owed once it is due, in transactions none of which
 *	  stays open longer than flusso.max_transaction_duration.
 *
 * A worker that is behind (flushed WAL remains to be read) resolves batch
 * after batch before it builds, so that a document changed in many of
 * them is built once; it builds when it has read all the flushed WAL, or
 * once documents have been owed for flusso.max_build_delay.  The worker
 * confirms the slot only past changes whose documents are written, after
 * the last of these transactions has committed: a crash in between
 * resolves and builds them again, which writes the same documents.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "executor/spi.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include <sys/stat.h>
#include <unistd.h>

#include "worker/capture_log.h"
#include "util/xact.h"
#include "settings.h"
#include "worker/catchup.h"

/*
 * A write under way that makes a worker owing many documents wait before
 * it builds them: this much WAL past its reader, or this many changes of
 * transactions in progress; a light load leaves a few kilobytes and a few
 * changes.
 */
#define WAIT_UNREAD_BYTES (1024 * 1024)
#define WAIT_QUEUED_CHANGES 10000

void
catchup_init(Catchup *catchup)
{
	memset(catchup, 0, sizeof(Catchup));
}

/*
 * Test hook, only in the build `make test` installs: crash once between a
 * batch's commit and its confirmation.
 */
static void
maybe_crash_after_flush(void)
{
#ifdef FLUSSO_TEST_HOOKS
	struct stat st;

	if (flusso_test_crash_file == NULL || flusso_test_crash_file[0] == '\0')
		return;
	if (stat(flusso_test_crash_file, &st) != 0)
		return;
	unlink(flusso_test_crash_file);
	/* the worker commits asynchronously: flushed, the batch is applied for good */
	XLogFlush(XactLastCommitEnd);
	elog(PANIC, "flusso: crash injected between flush and confirm (%s)",
		 flusso_test_crash_file);
#endif
}

/*
 * Test hook, only in the build `make test` installs: every signal of the
 * batch, and the list of them, was allocated in context, the caller's,
 * which outlives the batch's transactions.  Checked after each part of the
 * batch, before its transaction commits: a signal that commit would free
 * is caught before it is used, which a server built without assertions
 * (no CLOBBER_FREED_MEMORY) would not notice.
 */
static void
check_signals_kept(List *signals, MemoryContext context)
{
#ifdef FLUSSO_TEST_HOOKS
	ListCell   *lc;

	if (signals != NIL && GetMemoryChunkContext(signals) != context)
		elog(ERROR, "flusso: the signals of the batch are not kept in memory context \"%s\"",
			 context->name);
	foreach(lc, signals)
	{
		Signal	   *signal = lfirst(lc);

		if (GetMemoryChunkContext(signal) != context ||
			GetMemoryChunkContext(signal->kind) != context ||
			GetMemoryChunkContext(signal->index_name) != context ||
			(signal->id && GetMemoryChunkContext(signal->id) != context) ||
			(signal->table && GetMemoryChunkContext(signal->table) != context))
			elog(ERROR, "flusso: a signal of the batch is not kept in memory context \"%s\"",
				 context->name);
	}
#endif
}

/*
 * Would one more step of about step_ms, in a transaction begun at began,
 * make it last longer than flusso.max_transaction_duration?
 */
static bool
transaction_full(TimestampTz began, long step_ms)
{
	long		elapsed = TimestampDifferenceMilliseconds(began, GetCurrentTimestamp());

	return elapsed + step_ms > flusso_max_transaction_duration;
}

/*
 * Log the batch's changes for flusso_capture_log: its row changes, and the
 * tables it says were rewritten or not covered (not the rows of
 * flusso.signal).
 */
static void
log_batch(ChangeBatch *batch)
{
	ThinChange	change;

	batch_begin_scan(batch);
	while (batch_next(batch, &change))
		capture_log_write(&change);
	for (int n = 0; n < batch_note_count(batch); n++)
	{
		batch_read_note(batch, n, &change);
		if (change.op == THIN_REWRITE || change.op == THIN_UNCOVERED)
			capture_log_write(&change);
	}
}

/*
 * Act on the signals a batch ended with, in its last transaction: the
 * engine acts on requests (engine/signals.c), and the seed gets the
 * indexes to seed afresh and the watermarks.  True when a table an index
 * reads was rewritten or altered.
 */
static bool
act_on_signals(Engine *engine, Seeder *seeder, List *signals)
{
	SignalOutcome outcome;

	if (signals == NIL)
		return false;
	signal_act(engine, signals, &outcome);
	seed_restart(seeder, outcome.reseeded);
	seed_take_watermarks(seeder, outcome.watermarks);
	/* a signal may have asked for a seed that need not wait */
	seed_wake(seeder);
	return outcome.recompile;
}

/*
 * Resolve the batch into the documents each index owes, once every
 * transaction it came from is visible, and act on the signals it ended
 * with.  A large batch is resolved in several transactions, none longer
 * than flusso.max_transaction_duration (but for one part of KEY_SET_LIMIT
 * keys): nothing is confirmed before the documents are written, so a
 * crash resolves it again.  *rewritten says whether a signal said a table
 * an index reads was rewritten or altered (its columns may read
 * differently: compile the indexes again).  The signals are read first,
 * into context, which outlives these transactions (the worker's turn), and
 * acted on after the last part.
 *
 * The first transaction, which sees every transaction of the batch, first
 * checks that the engine was compiled from the definitions the catalog
 * holds now: a batch is never resolved by indexes that changed before its
 * changes were made (CATCHUP_STALE: the caller looks at the catalog and
 * restarts).  That costs one statement per batch, in a transaction the
 * batch needs anyway.
 */
CatchupResult
catchup_resolve(Catchup *catchup, DatabaseEntry *entry, Engine *engine,
				ChangeBatch *batch, Seeder *seeder, MemoryContext context,
				bool *rewritten)
{
	int			nxids;
	TransactionId *xids = batch_xids(batch, &nxids);
	MemoryContext old = MemoryContextSwitchTo(context);
	List	   *signals = signal_read(engine, batch);
	TimestampTz began = GetCurrentTimestamp();

	MemoryContextSwitchTo(old);
	if (!xact_begin(true, xids, nxids))
		return CATCHUP_EXTENSION_GONE;
	SPI_connect();
	if (!engine_is_current(engine))
	{
		SPI_finish();
		xact_commit();
		return CATCHUP_STALE;
	}
	if (flusso_capture_log)
		log_batch(batch);
	engine_resolve_begin(engine, batch);
	for (;;)
	{
		TimestampTz step = GetCurrentTimestamp();
		bool		more = engine_resolve(engine, batch);

		check_signals_kept(signals, context);
		if (!more)
			break;
		if (!transaction_full(began, TimestampDifferenceMilliseconds(step, GetCurrentTimestamp())))
			continue;
		SPI_finish();
		xact_commit();
		if (!xact_begin(true, NULL, 0))
			return CATCHUP_EXTENSION_GONE;
		SPI_connect();
		began = GetCurrentTimestamp();
	}
	*rewritten = act_on_signals(engine, seeder, signals);
	SPI_finish();
	xact_commit();

	if (engine_has_owed(engine) && catchup->owed_since == 0)
		catchup->owed_since = GetCurrentTimestamp();
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry->changes_captured += batch->nreceived;
	entry->batches++;
	/* what the batch read, each index owes now: its own lag says how long */
	entry->oldest_unresolved = 0;
	LWLockRelease(flusso_shared->lock);
	engine_publish_progress(engine, InvalidXLogRecPtr);
	return CATCHUP_RESOLVED;
}

/*
 * Build and write the documents the indexes owe: one round, in which each
 * index that owes documents has a turn of about half
 * flusso.max_transaction_duration (engine/owed.c), a slice at a time, in
 * transactions that commit at the end of each turn, or before the next
 * slice would make them last longer than flusso.max_transaction_duration.  What an index could not
 * build in its turn it builds in the next round, at the worker's next
 * turn: meanwhile the worker reads the WAL again, and the changes of
 * the other indexes are built within a round, never behind another
 * index's whole backlog.  As each transaction commits, flusso_status()
 * learns how many documents are still owed, by each index and together,
 * and the pace of this build, which it estimates the rest from.  False
 * when the extension was dropped meanwhile.
 */
bool
catchup_build(Catchup *catchup, DatabaseEntry *entry, Engine *engine)
{
	bool		more = true;
	bool		turn_over = false;
	long		step_ms = 0;
	int64		owed_before = engine_owed_count(engine);
	int64		built = 0;
	TimestampTz started = GetCurrentTimestamp();

	engine_round_begin(engine);
	while (more)
	{
		TimestampTz began = GetCurrentTimestamp();
		int64		written = 0;
		long		took_ms;

		if (!xact_begin(true, NULL, 0))
			return false;
		do
		{
			TimestampTz step = GetCurrentTimestamp();

			more = engine_build_owed(engine, engine_turn_ms(), &written, &built, &turn_over);
			step_ms = TimestampDifferenceMilliseconds(step, GetCurrentTimestamp());
		} while (more && !turn_over && !transaction_full(began, step_ms));
		xact_commit();
		/* what flusso_status() estimates the rest from: this build's pace */
		took_ms = TimestampDifferenceMilliseconds(started, GetCurrentTimestamp());
		LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
		entry->documents_written += written;
		entry->documents_owed = engine_has_owed(engine) ? Max(owed_before - built, 0) : 0;
		if (built > 0)
			entry->build_rate = (double) built * 1000.0 / Max(took_ms, 1);
		LWLockRelease(flusso_shared->lock);
		engine_publish_progress(engine, InvalidXLogRecPtr);
	}
	if (!engine_has_owed(engine))
		catchup->owed_since = 0;
	maybe_crash_after_flush();
	return true;
}

/*
 * Build what the indexes owe now?  When the worker has read all the WAL
 * flushed (it is not behind, or no longer), or has owed documents for
 * flusso.max_build_delay: until then a worker that is behind resolves
 * batch after batch, and a document changed in many of them is built once.
 *
 * A worker that has read all the flushed WAL still counts as behind while
 * it owes more documents than one slice builds and a large write is under
 * way that the stream has not handed over (WAIT_UNREAD_BYTES of WAL
 * written past the reader, or WAIT_QUEUED_CHANGES changes of transactions
 * in progress): its changes are likely to owe the same documents again
 * once it commits (rows loaded in one transaction, then the rows related
 * to them in the next ones), and building them now would build them
 * twice.  A few owed documents, and the small writes of a light load, do
 * not wait: the commit -> visible latency of light loads is what it was.
 *
 * While a seed runs (seeding), the worker is never quite caught up: each
 * chunk's watermarks end a batch with more WAL behind them, its own
 * writes.  Then what is owed waits one turn at most, not
 * flusso.max_build_delay, so that a seed delays no other index's live
 * changes by much more than a turn.
 */
bool
catchup_build_due(Catchup *catchup, Engine *engine, bool behind,
				  CaptureStream *stream, bool seeding)
{
	long		delay = seeding ? Min(flusso_max_build_delay, engine_turn_ms())
		: flusso_max_build_delay;

	if (!engine_has_owed(engine))
		return false;
	if (!behind && engine_owed_count(engine) > ENGINE_BUILD_SLICE &&
		cdc_write_under_way(stream, WAIT_UNREAD_BYTES, WAIT_QUEUED_CHANGES))
		behind = true;
	return !behind || catchup->owed_since == 0 ||
		TimestampDifferenceExceeds(catchup->owed_since, GetCurrentTimestamp(), delay);
}

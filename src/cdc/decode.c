/*-------------------------------------------------------------------------
 *
 * decode.c
 *	  Decodes the WAL in-process through the logical decoding C API, the
 *	  way a walsender does: outside any transaction, with one decoding
 *	  context kept between batches.
 *
 * The reader is bounded by the flushed WAL position, as logicalfuncs.c
 * bounds it, so read_local_xlog_page never has to wait for WAL that is not
 * there; the caller waits on its latch between batches instead.  A
 * failover slot (17 and later) is bounded as a walsender's is, by what the
 * standbys named in synchronized_standby_slots have confirmed: a change is
 * applied only once a standby that may be promoted has it.
 * (read_local_xlog_page_no_wait cannot be used: its private data would be
 * the decoding context.)  All changes of a transaction arrive inside one
 * LogicalDecodingProcessRecord() call, under the reorder buffer's own
 * transaction: the write callback only copies them into the batch.
 *
 * The plugin's commit callback is wrapped, so that the worker hears of
 * every transaction the reorder buffer replayed: its lookups, made under
 * the historic snapshot, stay in this process's caches, and the worker's
 * next transaction starts from clean ones (util/xact.c).  The plugin
 * itself runs in user backends too (pg_logical_slot_get_changes), where
 * the worker's transactions are nothing to it.
 *
 * Progress is confirmed by the caller once what it read has been applied;
 * the slot is saved to disk at a bounded rate, not on every batch.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/xlog.h"
#include "access/xlogutils.h"
#include "miscadmin.h"
#include "replication/decode.h"
#include "replication/reorderbuffer.h"
#include "replication/slot.h"
#include "storage/spin.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "cdc/decode.h"
#include "util/xact.h"
#include "compat.h"
#include "settings.h"

#define FLUSSO_PLUGIN "flusso"

static void
prepare_write(LogicalDecodingContext *ctx, XLogRecPtr lsn, TransactionId xid,
			  bool last_write)
{
	resetStringInfo(ctx->out);
}

static void
do_write(LogicalDecodingContext *ctx, XLogRecPtr lsn, TransactionId xid,
		 bool last_write)
{
	CaptureStream *stream = ctx->output_writer_private;

	batch_add(stream->batch, ctx->out->data, ctx->out->len);
}

/*
 * The plugin's commit callback, then the note that a transaction was
 * replayed: the relations its changes touched were looked up as they were
 * then.
 */
static void
commit_replayed(LogicalDecodingContext *ctx, ReorderBufferTXN *txn,
				XLogRecPtr commit_lsn)
{
	CaptureStream *stream = ctx->output_writer_private;

	stream->plugin_commit(ctx, txn, commit_lsn);
	xact_note_decoding(ctx->reader->EndRecPtr);
}

/* Is the named slot there, and was it invalidated? */
static bool
slot_exists(const char *slot_name, bool *invalidated)
{
	ReplicationSlot *slot;

	*invalidated = false;
	LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
	slot = SearchNamedReplicationSlot(slot_name, false);
	if (slot)
	{
		SpinLockAcquire(&slot->mutex);
		*invalidated = compat_slot_invalidated(slot);
		SpinLockRelease(&slot->mutex);
	}
	LWLockRelease(ReplicationSlotControlLock);
	return slot != NULL;
}

/*
 * Make sure the slot exists and can be read: create it when missing, and
 * drop and create it when it was invalidated (its WAL is gone).  Creating
 * waits for a consistent point, which older running transactions can hold
 * up; waiting() is called first so that the caller can say so.
 */
SlotState
cdc_prepare_slot(const char *slot_name, void (*waiting) (void))
{
	bool		invalidated;
	SlotState	state = SLOT_READY;
	LogicalDecodingContext *ctx;

	if (slot_exists(slot_name, &invalidated) && !invalidated)
		return SLOT_READY;
	if (invalidated)
	{
		ReplicationSlotDrop(slot_name, true);
		state = SLOT_RECREATED;
	}
	else
		state = SLOT_CREATED;

	compat_slot_create_ephemeral(slot_name, flusso_failover_slot);
	if (waiting)
		waiting();
	ctx = CreateInitDecodingContext(FLUSSO_PLUGIN, NIL, false, InvalidXLogRecPtr,
									XL_ROUTINE(.page_read = read_local_xlog_page,
											   .segment_open = wal_segment_open,
											   .segment_close = wal_segment_close),
									NULL, NULL, NULL);
	DecodingContextFindStartpoint(ctx);
	FreeDecodingContext(ctx);
	ReplicationSlotPersist();
	ReplicationSlotRelease();
	return state;
}

/*
 * Acquire the slot and start decoding where it was last confirmed.  Call
 * in a memory context that lives as long as the stream.
 */
CaptureStream *
cdc_open(const char *slot_name, List *options, ChangeBatch *batch)
{
	CaptureStream *stream = palloc0(sizeof(CaptureStream));

	compat_slot_acquire(slot_name);
	stream->batch = batch;
	stream->ctx = CreateDecodingContext(InvalidXLogRecPtr, options, false,
										XL_ROUTINE(.page_read = read_local_xlog_page,
												   .segment_open = wal_segment_open,
												   .segment_close = wal_segment_close),
										prepare_write, do_write, NULL);
	stream->ctx->output_writer_private = stream;
	stream->plugin_commit = stream->ctx->callbacks.commit_cb;
	stream->ctx->callbacks.commit_cb = commit_replayed;
	XLogBeginRead(stream->ctx->reader, MyReplicationSlot->data.restart_lsn);
	stream->confirmed = MyReplicationSlot->data.confirmed_flush;
	stream->saved_at = GetCurrentTimestamp();
	return stream;
}

/*
 * How far the reader may go.  The flushed position, unless the standbys
 * that must confirm a failover slot's changes have not received it: then
 * the position flushed at the previous read, once they have that, or else
 * the last one they confirmed.  Probing one read behind, the reader goes on
 * while the standbys trail a primary that is always written to, without
 * ever waiting in here.
 */
static XLogRecPtr
readable_end(CaptureStream *stream)
{
	XLogRecPtr	flushed = GetFlushRecPtr(NULL);

	if (compat_standbys_confirmed(flushed))
		stream->standby_end = flushed;
	else if (!XLogRecPtrIsInvalid(stream->standby_probe) &&
			 compat_standbys_confirmed(stream->standby_probe))
		stream->standby_end = stream->standby_probe;
	stream->standby_probe = flushed;
	return stream->standby_end;
}

/*
 * Decode WAL up to the flushed position, until max_changes records are in
 * the batch, timeout_ms has passed, or a row was inserted into
 * flusso.signal; a transaction is never split.  Ending the batch at a
 * signal keeps its place in the stream: every other change of the batch
 * came before it or with it.  Returns whether flushed WAL remains to be
 * read.  Decoding runs in the stream's memory context: the reader
 * allocates its buffers as it first needs them, and keeps them; the
 * caller's is current again on return, though the reorder buffer replays
 * each transaction in a transaction of its own, whose end leaves
 * TopMemoryContext current.
 */
bool
cdc_read(CaptureStream *stream, int max_changes, int timeout_ms)
{
	MemoryContext caller = MemoryContextSwitchTo(stream->ctx->context);
	XLogReaderState *reader = stream->ctx->reader;
	XLogRecPtr	end = readable_end(stream);
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout_ms);

	/* a batch begins: every commit it will hold is read from here on */
	if (stream->batch->nreceived == 0 && stream->batch->notes == NIL)
		stream->batch->read_from = reader->EndRecPtr;
	while (reader->EndRecPtr < end)
	{
		char	   *errm = NULL;
		XLogRecord *record = XLogReadRecord(reader, &errm);

		if (errm)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("could not read WAL for flusso at %X/%X: %s",
							LSN_FORMAT_ARGS(reader->EndRecPtr), errm)));
		if (record)
			LogicalDecodingProcessRecord(stream->ctx, reader);
		CHECK_FOR_INTERRUPTS();

		if (stream->batch->nreceived >= max_changes ||
			stream->batch->nsignals > 0 ||
			GetCurrentTimestamp() >= deadline)
			break;
	}
	MemoryContextSwitchTo(caller);
	return reader->EndRecPtr < end;
}

/*
 * Is a write under way whose changes the batch has not received: at least
 * unread_bytes of WAL written past the reader, flushed or not, or at least
 * queued_changes changes of transactions still in progress decoded and
 * waiting in the reorder buffer for their commit (subtransactions' not
 * counted)?  Either way more changes are coming, however close the reader
 * stands to the flushed position.
 */
bool
cdc_write_under_way(CaptureStream *stream, uint64 unread_bytes,
					uint64 queued_changes)
{
	XLogRecPtr	inserted = GetXLogInsertRecPtr();
	XLogRecPtr	read = stream->ctx->reader->EndRecPtr;
	uint64		queued = 0;
	dlist_iter	iter;

	if (inserted > read && inserted - read >= unread_bytes)
		return true;
	dlist_foreach(iter, &stream->ctx->reorder->toplevel_by_lsn)
	{
		ReorderBufferTXN *txn = dlist_container(ReorderBufferTXN, node, iter.cur);

		queued += txn->nentries;
		if (queued >= queued_changes)
			return true;
	}
	return false;
}

/*
 * Where the reader stands: every transaction that committed before this
 * position has been handed to the batch in full.
 */
XLogRecPtr
cdc_position(CaptureStream *stream)
{
	return stream->ctx->reader->EndRecPtr;
}

/*
 * Test hook, only in the build `make test` installs: while
 * flusso.test_crash_confirmed_file exists, crash once right after saving a
 * confirmation made since this process committed, the file in place.  The
 * crash takes the WAL buffers with it: had the confirmation come before
 * that commit was flushed, the commit would be lost while the slot has
 * moved past the changes it applied.
 */
static void
maybe_crash_after_confirm(bool saved)
{
#ifdef FLUSSO_TEST_HOOKS
	static XLogRecPtr armed_at = InvalidXLogRecPtr;
	struct stat st;

	if (flusso_test_crash_confirmed_file == NULL ||
		flusso_test_crash_confirmed_file[0] == '\0' ||
		stat(flusso_test_crash_confirmed_file, &st) != 0)
	{
		armed_at = InvalidXLogRecPtr;
		return;
	}
	if (XLogRecPtrIsInvalid(armed_at))
	{
		armed_at = Max(XactLastCommitEnd, 1);
		return;
	}
	if (!saved || XactLastCommitEnd <= armed_at)
		return;
	unlink(flusso_test_crash_confirmed_file);
	elog(PANIC, "flusso: crash injected after a confirmation (%s)",
		 flusso_test_crash_confirmed_file);
#endif
}

/* Confirm lsn now: the commits that applied what precedes it are on disk. */
static void
confirm_now(CaptureStream *stream, XLogRecPtr lsn)
{
	if (lsn <= stream->confirmed)
		return;
	LogicalConfirmReceivedLocation(lsn);
	ReplicationSlotMarkDirty();
	stream->confirmed = lsn;
	stream->unsaved = true;
	if (stream->waiting <= lsn)
		stream->waiting = InvalidXLogRecPtr;
}

/*
 * Confirm that everything before lsn has been applied by the transactions
 * this process committed so far.  Those commit asynchronously (the worker
 * sets synchronous_commit off, as PostgreSQL's own apply workers default
 * to), so lsn is confirmed only once the last of them is flushed: at once
 * if it is, or else on a later call, once the WAL writer or another
 * commit flushed it; a newer position waiting replaces an older one, since
 * it waits for a later commit.  A crash before then loses at most
 * unconfirmed work, which the slot delivers again.
 *
 * The slot may then free WAL and system catalog rows older than that.  It is
 * marked dirty, so that a checkpoint writes it too, and written to disk at
 * most every save_interval_ms: a crash redelivers at most the changes
 * confirmed since.  Call this on every turn, also when nothing new was
 * confirmed, so that a position waiting for a flush, and a confirmation
 * not yet saved, are dealt with even when the stream goes quiet.
 */
void
cdc_confirm(CaptureStream *stream, XLogRecPtr lsn, int save_interval_ms)
{
	TimestampTz now = GetCurrentTimestamp();
	XLogRecPtr	flushed = GetFlushRecPtr(NULL);

	if (!XLogRecPtrIsInvalid(stream->waiting) && stream->waiting_commit <= flushed)
		confirm_now(stream, stream->waiting);
	if (lsn > stream->confirmed && lsn > stream->waiting)
	{
		if (XactLastCommitEnd <= flushed)
			confirm_now(stream, lsn);
		else
		{
			stream->waiting = lsn;
			stream->waiting_commit = XactLastCommitEnd;
		}
	}
	if (stream->unsaved &&
		TimestampDifferenceExceeds(stream->saved_at, now, save_interval_ms))
	{
		ReplicationSlotSave();
		stream->saved_at = now;
		stream->unsaved = false;
		maybe_crash_after_confirm(true);
	}
	else
		maybe_crash_after_confirm(false);
}

/* Drop the slot, which no process holds, if it exists. */
void
cdc_drop_slot(const char *slot_name)
{
	bool		invalidated;

	if (slot_exists(slot_name, &invalidated))
		ReplicationSlotDrop(slot_name, true);
}

/* Stop decoding; release the slot, or drop it when nothing needs it. */
void
cdc_close(CaptureStream *stream, bool drop_slot)
{
	char		name[NAMEDATALEN];

	strlcpy(name, NameStr(MyReplicationSlot->data.name), NAMEDATALEN);
	/* what waits for a flush need not be delivered again */
	if (!drop_slot && !XLogRecPtrIsInvalid(stream->waiting))
	{
		XLogFlush(stream->waiting_commit);
		confirm_now(stream, stream->waiting);
	}
	FreeDecodingContext(stream->ctx);
	if (!drop_slot)
	{
		ReplicationSlotMarkDirty();
		ReplicationSlotSave();
	}
	ReplicationSlotRelease();
	if (drop_slot)
		ReplicationSlotDrop(name, true);
}

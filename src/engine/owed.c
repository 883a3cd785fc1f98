/*-------------------------------------------------------------------------
 *
 * owed.c
 *	  Writing documents: one statement builds a slice of keys' documents
 *	  and writes them through the index's sinks, and the documents an index
 *	  owes (engine/pending.c) are built a slice at a time, so that the
 *	  worker can commit between slices and no transaction of its lasts
 *	  longer than it allows, in rounds where each index has a turn of
 *	  bounded length, so that an index whose documents are dear, or that
 *	  owes many, never keeps the others' documents waiting behind it.
 *
 * Documents owed are built after the last commit of the last batch that
 * resolved to them, with the generations the index writes when they are
 * built: a seed that began or ended since then is written as it is now.
 * Building them again is harmless (every write is an upsert, a delete or
 * a versioned queue entry), which is what lets the worker confirm the
 * slot only once every slice is committed, and start again from the last
 * confirmation after a crash.  At the end of each turn the worker
 * publishes how far each index got (engine_publish_progress).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "binding/ready.h"
#include "document/docid.h"
#include "document/session.h"
#include "engine/engine_index.h"
#include "engine/engine_stream.h"
#include "engine/pending.h"
#include "ipc/shared.h"
#include "ipc/strikes.h"
#include "util/pace.h"
#include "util/spi_cache.h"

/*
 * May the documents the index writes now be queued for OpenSearch only if
 * the table sink changed them?  Only while OpenSearch mirrors the table
 * sink (sink/opensearch_sink.c says why that is safe), asked after the
 * write, in its transaction; and only for documents owed for changes read
 * past the WAL's insert position at the time the index was first seen to
 * mirror it with its served generation: the shipper built documents from
 * the rows until then, and changes committed before may have left
 * OpenSearch with a document the table sink never held.
 */
static bool
queue_changed_only(EngineIndex *ei, SinkTarget target)
{
	int64		served;

	if (target != SINK_CURRENT || !ei->sink->table || ei->sink->server == NULL)
		return false;
	served = sink_mirrored(ei->sink);
	if (served == 0 || ei->next || ei->needs_seed)
	{
		ei->mirrored = 0;
		return false;
	}
	if (served != ei->mirrored)
	{
		ei->mirrored = served;
		ei->mirrored_from = GetXLogInsertRecPtr();
		return false;
	}
	return !XLogRecPtrIsInvalid(ei->owed.draining_after) &&
		ei->owed.draining_after >= ei->mirrored_from;
}

/*
 * One statement builds the documents of n keys (their parts, one array per
 * key column, and their ids), upserts those that built and changed, and
 * deletes those that built nothing, in the generations target names; the
 * ids are queued for the sinks that ship later, at version: all of them,
 * or, while OpenSearch mirrors the table sink, those whose document the
 * table sink changed.  Frees the ids and parts.  Returns the documents
 * written and queued.
 */
int64
engine_write_slice(EngineIndex *ei, SinkTarget target, XLogRecPtr version,
				   Datum **parts, Datum *ids, int n)
{
	DocumentQuery *q = ei->query;
	int			nkeys = q->nkeys;
	int			nargs = nkeys + q->nparams + 1;
	Datum	   *key_arrays = palloc(sizeof(Datum) * Max(nkeys, 1));
	Datum	   *values;
	Oid		   *types = doc_query_param_types(q, 1);
	bool		isnull;
	int64		written;
	Datum		changed;
	bool		none_changed;

	for (int k = 0; k < nkeys; k++)
		key_arrays[k] = PointerGetDatum(construct_array(parts[k], n, TEXTOID,
														-1, false, TYPALIGN_INT));
	values = doc_query_param_values(q, key_arrays, 1);
	/* the document ids come last */
	values[nargs - 1] = PointerGetDatum(construct_array(ids, n, TEXTOID,
														-1, false, TYPALIGN_INT));
	types[nargs - 1] = TEXTARRAYOID;
	if (spi_execute_by_keys(ei->apply_sql[target], n, nargs, types, values, false) != SPI_OK_SELECT)
		elog(ERROR, "could not write the documents of index \"%s\"", ei->index->name);
	written = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	changed = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &none_changed);
	if (!none_changed)
		changed = PointerGetDatum(DatumGetArrayTypePCopy(changed));
	SPI_freetuptable(SPI_tuptable);
	if (!queue_changed_only(ei, target))
		written += sink_queue(ei->sink, target, values[nargs - 1], version);
	else if (!none_changed)
		written += sink_queue(ei->sink, target, changed, version);
	if (!none_changed)
		pfree(DatumGetPointer(changed));
	for (int k = 0; k < nkeys; k++)
		pfree(DatumGetPointer(key_arrays[k]));
	pfree(DatumGetPointer(values[nargs - 1]));
	for (int i = 0; i < n; i++)
	{
		pfree(DatumGetPointer(ids[i]));
		for (int k = 0; k < nkeys; k++)
			pfree(DatumGetPointer(parts[k][i]));
	}
	return written;
}

/*
 * Work on an index's documents as its owner: once the owner may read
 * every table and column the index reads (it may have lost a privilege
 * since), under the session every build runs in (document/session.c),
 * with SPI connected.
 */
void
engine_session_begin(EngineIndex *ei, BuildSession *session)
{
	bind_index_readable(ei->reads, ei->index->owner);
	doc_session_begin(session, ei->index->owner);
	SPI_connect();
}

void
engine_session_end(BuildSession *session)
{
	SPI_finish();
	doc_session_end(session);
}

/* Does the index owe documents? */
bool
engine_index_owes(const EngineIndex *ei)
{
	return ei->owed.filling &&
		(!pending_is_empty(ei->owed.filling) || !pending_is_empty(ei->owed.draining));
}

/* Forget what the index owes: it failed, and is seeded again once it builds. */
static void
forget_owed(EngineIndex *ei)
{
	pending_reset(ei->owed.filling);
	pending_reset(ei->owed.draining);
	ei->owed.reading = false;
}

/*
 * Make draining the set a build reads: once the one it held is read out,
 * it takes what filling holds, and filling starts empty.  False when
 * nothing is owed.
 */
static bool
take_owed(EngineIndex *ei)
{
	OwedDocuments *owed = &ei->owed;

	if (owed->reading)
		return true;
	if (pending_is_empty(owed->draining))
	{
		PendingKeys *emptied = owed->draining;

		if (pending_is_empty(owed->filling))
			return false;
		owed->draining = owed->filling;
		owed->draining_after = owed->filling_after;
		owed->draining_since = owed->filling_since;
		owed->filling = emptied;
		owed->filling_after = InvalidXLogRecPtr;
		owed->filling_since = 0;
	}
	pending_begin_read(owed->draining);
	owed->reading = true;
	return true;
}

/* A slice of the documents one index owes. */
typedef struct OwedSlice
{
	EngineIndex *ei;
	XLogRecPtr	version;
	Datum	  **parts;
	Datum	   *ids;
	int			n;
	int64		written;
} OwedSlice;

/* Build and write a slice as the index's owner; in a subtransaction. */
static void
write_owed(void *arg)
{
	OwedSlice  *slice = arg;
	EngineIndex *ei = slice->ei;
	BuildSession session;

	engine_session_begin(ei, &session);
	slice->written = engine_write_slice(ei, ei->next ? SINK_CURRENT_AND_NEXT : SINK_CURRENT,
										slice->version, slice->parts, slice->ids, slice->n);
	engine_session_end(&session);
}

/* Does an index owe documents? */
bool
engine_has_owed(Engine *engine)
{
	ListCell   *lc;

	foreach(lc, engine->indexes)
	{
		if (engine_index_owes(lfirst(lc)))
			return true;
	}
	return false;
}

/* How many documents the indexes owe, at most (repeats counted). */
int64
engine_owed_count(Engine *engine)
{
	ListCell   *lc;
	int64		n = 0;

	foreach(lc, engine->indexes)
		n += engine_index_owed_count(lfirst(lc));
	return n;
}

/* How many documents an index owes, at most (repeats counted). */
int64
engine_index_owed_count(const EngineIndex *ei)
{
	if (ei->owed.filling == NULL)
		return 0;
	return pending_added(ei->owed.filling) + pending_added(ei->owed.draining);
}

/* The commit time of the oldest change whose document ei owes, or 0. */
TimestampTz
engine_index_owed_since(const EngineIndex *ei)
{
	if (ei->owed.filling == NULL)
		return 0;
	if (!pending_is_empty(ei->owed.draining))
		return ei->owed.draining_since;
	return pending_is_empty(ei->owed.filling) ? 0 : ei->owed.filling_since;
}

/*
 * Every change that committed at or before the position returned is in
 * ei's sinks, resolved being where the stream has read and resolved up
 * to; InvalidXLogRecPtr for an index that cannot build (no sets), or
 * reads a table replaced under its name, until it is seeded from the new.
 */
XLogRecPtr
engine_index_applied(const EngineIndex *ei, XLogRecPtr resolved)
{
	if (ei->owed.filling == NULL || ei->broken || ei->set_aside || ei->replaced)
		return InvalidXLogRecPtr;
	if (!pending_is_empty(ei->owed.draining))
		return ei->owed.draining_after;
	if (!pending_is_empty(ei->owed.filling))
		return ei->owed.filling_after;
	return resolved;
}

/* The cheaper an index's last turn, the sooner its turn comes. */
static int
cheaper_first(const ListCell *a, const ListCell *b)
{
	long		ta = ((EngineIndex *) lfirst(a))->turn_ms;
	long		tb = ((EngineIndex *) lfirst(b))->turn_ms;

	return ta < tb ? -1 : ta > tb;
}

/*
 * Begin a round of building what the indexes owe: each that owes
 * documents gets a turn, the one whose last turn was shortest first, so
 * that an index that builds fast, whose documents wait for no backlog, is
 * never queued behind one that takes its whole turn.
 */
void
engine_round_begin(Engine *engine)
{
	ListCell   *lc;

	/* the last round ended with its last turn: nothing of it is left */
	engine->round = NIL;
	foreach(lc, engine->indexes)
	{
		if (engine_index_owes(lfirst(lc)))
			engine->round = lappend(engine->round, lfirst(lc));
	}
	list_sort(engine->round, cheaper_first);
	engine->turn_began = 0;
}

/* The index whose turn it is ends it, after building since turn_began. */
static void
end_turn(Engine *engine, EngineIndex *ei)
{
	ei->turn_ms = engine->turn_began == 0 ? 0
		: TimestampDifferenceMilliseconds(engine->turn_began, GetCurrentTimestamp());
	engine->round = list_delete_first(engine->round);
	engine->turn_began = 0;
}

/*
 * Build and write the next slice of the documents the index whose turn it
 * is owes, in the caller's transaction, adding to *written and the
 * documents built to *built.  A turn lasts about turn_ms (each slice is
 * sized to fit, from what the index's documents cost lately) or until the
 * index owes nothing more; then the next index has its turn.  So no index
 * keeps the others waiting longer than that, however much it owes and
 * however dear its documents are: what is left it builds in the next
 * round.  *turn_over says when a slice ended its index's turn: the caller
 * commits then, so that what the index wrote is seen before the next
 * index's turn, however long that lasts.  False once every index of the
 * round had its turn.  An index that failed forgets what it owed: it is
 * seeded again once it builds.
 */
bool
engine_build_owed(Engine *engine, long turn_ms, int64 *written, int64 *built,
				  bool *turn_over)
{
	EngineIndex *ei = NULL;
	OwedSlice	slice;
	int			nkeys;
	int			max_keys;
	char	   *id;
	long		spent;
	TimestampTz began;

	while (engine->round != NIL)
	{
		ei = linitial(engine->round);
		if (ei->broken)
			forget_owed(ei);
		spent = engine->turn_began == 0 ? 0
			: TimestampDifferenceMilliseconds(engine->turn_began, GetCurrentTimestamp());
		if (!ei->broken && spent < turn_ms && take_owed(ei))
			break;
		end_turn(engine, ei);
		ei = NULL;
	}
	if (ei == NULL)
		return false;
	if (engine->turn_began == 0)
		engine->turn_began = GetCurrentTimestamp();

	nkeys = ei->resolver->nkeys;
	max_keys = pace_keys(&ei->pace, turn_ms - spent, ENGINE_BUILD_SLICE);
	slice.ei = ei;
	slice.version = engine->owed_version;
	slice.parts = palloc(sizeof(Datum *) * nkeys);
	for (int k = 0; k < nkeys; k++)
		slice.parts[k] = palloc(sizeof(Datum) * max_keys);
	slice.ids = palloc(sizeof(Datum) * max_keys);
	slice.n = 0;
	while (slice.n < max_keys && (id = pending_next(ei->owed.draining)) != NULL)
	{
		char	   *parts[INDEX_MAX_KEYS];

		if (!doc_id_split(id, nkeys, parts))
			elog(ERROR, "malformed document id \"%s\" owed by index \"%s\"",
				 id, ei->index->name);
		slice.ids[slice.n] = CStringGetTextDatum(id);
		for (int k = 0; k < nkeys; k++)
			slice.parts[k][slice.n] = CStringGetTextDatum(parts[k]);
		slice.n++;
	}
	if (slice.n < max_keys)
	{
		/* every document of the set was handed out: this slice is its last */
		pending_reset(ei->owed.draining);
		ei->owed.reading = false;
	}
	*built += slice.n;
	began = GetCurrentTimestamp();
	if (slice.n > 0 && engine_attempt(ei, NULL, write_owed, &slice))
	{
		strikes_progressed(ei->index->name);
		*written += slice.written;
		pace_note(&ei->pace, slice.n, began);
	}
	if (ei->broken)
		forget_owed(ei);
	spent = TimestampDifferenceMilliseconds(engine->turn_began, GetCurrentTimestamp());
	*turn_over = ei->broken || spent >= turn_ms || !engine_index_owes(ei);
	if (*turn_over)
		end_turn(engine, ei);
	return true;
}

/*
 * What flusso_status() shows of each index's own backlog: the documents it
 * owes, since when, and what building one costs lately.  With resolved,
 * the position the stream has read and resolved up to, once the documents
 * built so far are committed, also what flusso_wait() waits for
 * (api/wait.c): how far each index's sinks have got.  An index that owes
 * nothing has applied every change before resolved; one that owes
 * documents, every change before the oldest set it owes was read from
 * (the sets' after); one the engine could not compile, nothing new.  The
 * sessions that wait are woken when an index got further.
 */
void
engine_publish_progress(Engine *engine, XLogRecPtr resolved)
{
	TimestampTz now = GetCurrentTimestamp();
	DatabaseEntry *entry;
	bool		moved = false;
	ListCell   *lc;

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry = shared_database(MyDatabaseId, false);
	foreach(lc, engine->indexes)
	{
		EngineIndex *ei = lfirst(lc);
		IndexStatus *status = entry ? shared_index_status(entry, ei->index->name) : NULL;
		XLogRecPtr	applied;

		if (status == NULL)
			continue;
		status->owed = engine_index_owed_count(ei);
		status->owed_since = engine_index_owed_since(ei);
		status->build_ms = ei->pace.ms_each;
		if (XLogRecPtrIsInvalid(resolved))
			continue;
		applied = engine_index_applied(ei, resolved);
		if (!XLogRecPtrIsInvalid(applied) && applied > status->applied_lsn)
		{
			status->applied_lsn = applied;
			status->applied_at = now;
			moved = true;
		}
	}
	LWLockRelease(flusso_shared->lock);
	if (moved)
		shared_progress_made(entry);
}

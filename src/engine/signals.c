/*-------------------------------------------------------------------------
 *
 * signals.c
 *	  The signals a batch of the stream carries, read and acted on: rows
 *	  inserted into flusso.signal (a re-snapshot request, whole or of some
 *	  documents, a change of the partitions of a table an index reads, an
 *	  alteration, a retry of rejected documents, a seed's watermarks), and
 *	  one signal per index that reads a table the stream says was rewritten
 *	  or changed while the publication did not cover it.
 *
 * The batch keeps these records apart from the row changes (cdc/batch.c,
 * its notes), in stream order.  A seed's watermarks are handed back, with
 * the indexes whose seed must start afresh, for the worker to give the
 * seed (seed.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "engine/engine_stream.h"
#include "ipc/shared.h"
#include "store/catalog_index.h"
#include "store/catalog_signal.h"

/*
 * The signal a row of flusso.signal makes, or NULL when it is not one: its
 * id, kind and index name, and its detail (THIN_MISSING before 0.11.0,
 * whose table lacks the column).
 */
static Signal *
row_signal(const ThinChange *change)
{
	Signal	   *signal;

	if (change->op != THIN_INSERT || change->ncolumns != 4 || change->new_values == NULL)
		return NULL;
	for (int c = 0; c < 3; c++)
	{
		if (change->new_values[c].kind != THIN_TEXT)
			return NULL;
	}
	signal = palloc0(sizeof(Signal));
	signal->id = pstrdup(change->new_values[0].text);
	signal->kind = pstrdup(change->new_values[1].text);
	signal->index_name = pstrdup(change->new_values[2].text);
	if (change->new_values[3].kind == THIN_TEXT)
		signal->detail = pstrdup(change->new_values[3].text);
	signal->lsn = change->commit_end_lsn;
	return signal;
}

/* Is there a signal of kind for index name in signals already? */
static bool
signalled(List *signals, const char *kind, const char *name)
{
	ListCell   *lc;

	foreach(lc, signals)
	{
		Signal	   *signal = lfirst(lc);

		if (strcmp(signal->kind, kind) == 0 && strcmp(signal->index_name, name) == 0)
			return true;
	}
	return false;
}

/*
 * A table was rewritten, or changed while the publication did not cover
 * it: every index that reads it must be seeded again.  One signal per
 * index and kind is added to signals.
 */
static List *
coverage_signals(Engine *engine, const ThinChange *change, List *signals)
{
	const char *kind = change->op == THIN_REWRITE ? SIGNAL_REWRITE : SIGNAL_UNCOVERED;
	ListCell   *lc;

	foreach(lc, engine_readers(engine, change->relid))
	{
		const char *name = engine_index_name(lfirst(lc));
		Signal	   *signal;

		if (signalled(signals, kind, name))
			continue;
		signal = palloc0(sizeof(Signal));
		signal->kind = pstrdup(kind);
		signal->index_name = pstrdup(name);
		signal->table = psprintf("%s.%s", change->nspname, change->relname);
		signals = lappend(signals, signal);
	}
	return signals;
}

/*
 * The signals of a batch, in stream order, allocated in the caller's
 * memory context, which must outlive the transactions the batch is
 * resolved in (the worker's turn).
 */
List *
signal_read(Engine *engine, const ChangeBatch *batch)
{
	List	   *signals = NIL;

	for (int n = 0; n < batch_note_count(batch); n++)
	{
		ThinChange	change;

		batch_read_note(batch, n, &change);
		if (change.op == THIN_REWRITE || change.op == THIN_UNCOVERED)
			signals = coverage_signals(engine, &change, signals);
		else
		{
			Signal	   *signal = row_signal(&change);

			if (signal)
				signals = lappend(signals, signal);
		}
	}
	return signals;
}

/*
 * Say why an index will be seeded again: asked for, a table it reads
 * gained or lost a partition, was altered (hooks/altered.c), replaced
 * under its name (hooks/replaced.c), was rewritten, or changed while the
 * publication did not cover it.  In the last two cases the index is in
 * phase error until the seed can begin, which is once the publication
 * covers every table it reads.
 */
static void
announce(EngineIndex *ei, const Signal *signal)
{
	const char *name = engine_index_name(ei);

	if (strcmp(signal->kind, SIGNAL_RESNAPSHOT) == 0)
	{
		/* the worker may have kept dying on it: the user asks again */
		engine_forgive(ei);
		ereport(LOG, (errmsg("flusso: re-snapshot of index \"%s\" requested", name)));
	}
	else if (strcmp(signal->kind, SIGNAL_PARTITIONS) == 0)
		ereport(LOG,
				(errmsg("flusso: a partition of a table index \"%s\" reads was attached, detached or dropped, so the index will be seeded again",
						name)));
	else if (strcmp(signal->kind, SIGNAL_ALTERED) == 0)
		ereport(LOG,
				(errmsg("flusso: a table index \"%s\" reads was altered without a row change being logged, so the index will be seeded again",
						name)));
	else if (strcmp(signal->kind, SIGNAL_REPLACED) == 0)
	{
		char	   *message = pstrdup("a table this index reads was replaced under its name (renamed, moved to another schema, dropped, or another table given its name): the index reads the table that has the name now, and is seeded again once the publication covers every table it reads");

		ereport(LOG, (errmsg("flusso: index \"%s\": %s", name, message)));
		shared_report_phase(name, PHASE_ERROR, message, -1, 0);
	}
	else if (strcmp(signal->kind, SIGNAL_REWRITE) == 0)
		ereport(LOG,
				(errmsg("flusso: table %s was rewritten, so index \"%s\" will be seeded again",
						signal->table, name)));
	else
	{
		char	   *message = psprintf("changes to table %s were not published, so they are lost to this index; it is seeded again once the publication covers every table it reads",
									   signal->table);

		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("flusso index \"%s\": %s", name, message)));
		shared_report_phase(name, PHASE_ERROR, message, -1, 0);
	}
}

/* Append item to list in context (the caller's: SPI's ends with the call). */
static List *
keep(List *list, void *item, MemoryContext context)
{
	MemoryContext old = MemoryContextSwitchTo(context);

	list = lappend(list, item);
	MemoryContextSwitchTo(old);
	return list;
}

/*
 * Mark the index of a signal for seeding; the caller abandons a seed of it
 * in progress and forgets its cursor (outcome->reseeded).
 */
static void
seed_again(Engine *engine, const Signal *signal, SignalOutcome *outcome,
		   MemoryContext caller)
{
	EngineIndex *ei = engine_index(engine, signal->index_name);

	if (ei == NULL)
	{
		/* its index was dropped since */
		if (signal->id)
			catalog_forget_signal(signal->id);
		return;
	}
	catalog_mark_for_seeding(signal->index_name, false);
	engine_needs_seed(ei, true);
	if (!list_member_ptr(outcome->reseeded, ei))
		outcome->reseeded = keep(outcome->reseeded, ei, caller);
	announce(ei, signal);
}

/*
 * flusso_retry_rejected(): queue the index's rejected documents again, at
 * the version of the request's commit, and forget the request.
 */
static void
retry_rejected(Engine *engine, const Signal *signal)
{
	EngineIndex *ei = engine_index(engine, signal->index_name);

	if (ei && !engine_index_broken(ei))
	{
		engine_retry_rejected(ei, signal->lsn);
		ereport(LOG,
				(errmsg("flusso: the rejected documents of index \"%s\" are queued again",
						signal->index_name)));
	}
	catalog_forget_signal(signal->id);
}

/*
 * flusso_resnapshot(name, predicate => ...) or (name, ids => ...): the
 * documents it names are added to those the index owes, rebuilt in place
 * (engine/rebuild.c), and the request is forgotten.  One that fails is
 * said in flusso_status()'s last_error, and the index goes on.
 */
static void
rebuild(Engine *engine, const Signal *signal)
{
	EngineIndex *ei = engine_index(engine, signal->index_name);
	char	   *failure;
	int64		added;

	if (ei && signal->detail && !engine_index_broken(ei))
	{
		bool		by_ids = strcmp(signal->kind, SIGNAL_REBUILD_IDS) == 0;

		added = engine_rebuild(ei, by_ids ? NULL : signal->detail,
							   by_ids ? signal->detail : NULL, &failure);
		if (added >= 0)
			ereport(LOG,
					(errmsg("flusso: " INT64_FORMAT " documents of index \"%s\" are to be rebuilt, as flusso_resnapshot() asked",
							added, signal->index_name)));
		else
		{
			char	   *message = psprintf("index \"%s\": the documents a re-snapshot asked for were not rebuilt: %s",
										   signal->index_name, failure);
			DatabaseEntry *entry;

			ereport(WARNING, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
							  errmsg("flusso %s", message)));
			LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
			entry = shared_database(MyDatabaseId, false);
			if (entry)
				shared_record_error(entry, message);
			LWLockRelease(flusso_shared->lock);
		}
	}
	catalog_forget_signal(signal->id);
}

/*
 * Act on the signals a batch ended with, in the batch's transaction, after
 * its changes were applied.  A re-snapshot request, a change of
 * partitions, a rewrite or an alteration of a table an index reads, or a
 * change the publication did not cover marks the index for seeding
 * (outcome->reseeded: the caller abandons a seed of it in progress, which
 * starts again); a request itself is deleted when that seed completes.
 * outcome->recompile says a table was rewritten or altered: the caller
 * compiles the indexes again.  Watermarks go to outcome->watermarks.  The
 * lists are allocated in the caller's memory context.
 */
void
signal_act(Engine *engine, List *signals, SignalOutcome *outcome)
{
	MemoryContext caller = CurrentMemoryContext;
	ListCell   *lc;

	outcome->reseeded = NIL;
	outcome->watermarks = NIL;
	outcome->recompile = false;
	SPI_connect();
	foreach(lc, signals)
	{
		Signal	   *signal = lfirst(lc);

		if (strcmp(signal->kind, SIGNAL_RESNAPSHOT) == 0 ||
			strcmp(signal->kind, SIGNAL_PARTITIONS) == 0 ||
			strcmp(signal->kind, SIGNAL_ALTERED) == 0 ||
			strcmp(signal->kind, SIGNAL_REPLACED) == 0 ||
			strcmp(signal->kind, SIGNAL_REWRITE) == 0 ||
			strcmp(signal->kind, SIGNAL_UNCOVERED) == 0)
		{
			seed_again(engine, signal, outcome, caller);
			/* its columns may read differently now: compile it again */
			outcome->recompile |= strcmp(signal->kind, SIGNAL_REWRITE) == 0 ||
				strcmp(signal->kind, SIGNAL_ALTERED) == 0 ||
				strcmp(signal->kind, SIGNAL_REPLACED) == 0;
		}
		else if (strcmp(signal->kind, SIGNAL_RETRY) == 0)
			retry_rejected(engine, signal);
		else if (strcmp(signal->kind, SIGNAL_REBUILD) == 0 ||
				 strcmp(signal->kind, SIGNAL_REBUILD_IDS) == 0)
			rebuild(engine, signal);
		else
			outcome->watermarks = keep(outcome->watermarks, signal, caller);
	}
	SPI_finish();
}

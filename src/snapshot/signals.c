/*-------------------------------------------------------------------------
 *
 * signals.c
 *	  Acts on the signals a batch of the stream ended with: a seed's
 *	  watermarks, a re-snapshot request and a change of the partitions of a
 *	  table an index reads (rows of flusso.signal, seen in stream order),
 *	  and what the stream says of a table an index reads (it
 *	  was rewritten, or changed while the publication did not cover it),
 *	  which has the index seeded again.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "ipc/shared.h"
#include "util/xact.h"
#include "snapshot/seed.h"
#include "store/catalog_index.h"
#include "store/catalog_seed.h"
#include "store/catalog_signal.h"

/* The phase of an index, and what flusso_status() shows beside it. */
static void
set_phase(const char *name, IndexPhase phase, const char *message)
{
	DatabaseEntry *entry;

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry = shared_database(MyDatabaseId, false);
	if (entry)
		shared_set_phase(entry, name, phase, message);
	LWLockRelease(flusso_shared->lock);
}

/*
 * Say why an index will be seeded again: asked for, a table it reads
 * gained or lost a partition, was altered (hooks/altered.c), was
 * rewritten, or changed while the publication did not cover it.  In the
 * last case the index is in phase error until the seed can begin, which
 * is once the publication covers every table it reads again.
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
		set_phase(name, PHASE_ERROR, message);
	}
}

/* Mark the index of a signal for seeding, abandoning a seed of it. */
static void
seed_again(Engine *engine, Seed **seed, const Signal *signal)
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
	catalog_forget_seed(signal->index_name);
	seed_abandon(seed, ei);
	engine_needs_seed(ei, true);
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
 * Act on the signals a batch ended with, in the batch's transaction, after
 * its changes were applied.  A re-snapshot request, a change of
 * partitions, a rewrite or an alteration of a table an index reads, or a
 * change the publication did not cover marks the index for seeding and
 * abandons a seed of it in progress, which starts again; a request itself
 * is deleted when that seed completes.  True when a table was rewritten or
 * altered: the caller compiles the indexes again.
 */
bool
seed_handle_signals(Engine *engine, Seed **seed, List *signals)
{
	bool		reload = false;
	ListCell   *lc;

	SPI_connect();
	foreach(lc, signals)
	{
		Signal	   *signal = lfirst(lc);

		if (strcmp(signal->kind, SIGNAL_RESNAPSHOT) == 0 ||
			strcmp(signal->kind, SIGNAL_PARTITIONS) == 0 ||
			strcmp(signal->kind, SIGNAL_ALTERED) == 0 ||
			strcmp(signal->kind, SIGNAL_REWRITE) == 0 ||
			strcmp(signal->kind, SIGNAL_UNCOVERED) == 0)
		{
			seed_again(engine, seed, signal);
			/* its columns may read differently now: compile it again */
			reload |= strcmp(signal->kind, SIGNAL_REWRITE) == 0 ||
				strcmp(signal->kind, SIGNAL_ALTERED) == 0;
		}
		else if (strcmp(signal->kind, SIGNAL_RETRY) == 0)
			retry_rejected(engine, signal);
		else if (!seed_watermark(seed, signal->id, signal->lsn))
		{
			/* a watermark of an earlier run, or of a seed abandoned */
			catalog_forget_stale_watermark(signal->id);
		}
	}
	SPI_finish();
	return reload;
}

/* Watermarks of an earlier run count for nothing: delete them. */
void
seed_forget_watermarks(void)
{
	if (!xact_begin(true, NULL, 0))
		return;
	catalog_forget_all_watermarks();
	xact_commit();
}

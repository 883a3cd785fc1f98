/*-------------------------------------------------------------------------
 *
 * seed.c
 *	  Seeds an index without a long transaction and without pausing the
 *	  stream, by the DBLog watermark algorithm.
 *
 * The slot exists before a seed begins, and a seed begins only once the
 * current catalog shows every table of the index published.  It records
 * the largest root key and begins a next generation of the index's
 * documents, which from then on receives the index's live changes too.
 * Then, chunk after chunk:
 *
 *	1. commit a low watermark row into flusso.signal;
 *	2. in a new transaction, read the next flusso.snapshot_chunk_size root
 *	   keys after the cursor, up to the largest key, in key order;
 *	3. commit a high watermark row;
 *	4. the stream delivers the low watermark, then changes, then the high
 *	   one.  Documents the changes in between resolve to are built by the
 *	   stream from current rows, so they are dropped from the chunk; at the
 *	   high watermark the rest of the chunk is built and written, and the
 *	   cursor is saved in the same transaction.
 *
 * Documents are built from current rows, so a drop only saves work: the
 * drops are keyed by document (this index, this root key), compared with
 * the key types' own equality.  After the last chunk the next generation
 * is swapped in.  A restart resumes at the saved cursor; watermarks of an
 * earlier run are ignored, since only the pair this run wrote counts, and
 * deleted.  The slot is confirmed only past batches whose transaction
 * committed, so never past the saved cursor's chunk.
 *
 * Several seeds run side by side, up to flusso.max_seeds, each with its
 * own cursor, watermarks and next generation; each chunk is sized to a
 * share of the worker's turn.  A seed owns its cursor (a row of
 * flusso.seed) and its watermark rows (store/catalog_seed.c,
 * store/catalog_signal.c); it reads root keys in key order
 * (document/keyset.c) and builds them with the stream's own
 * engine_build() (apply.c) into the next generation of the index's sinks.
 * The worker's loop calls seed_step() each turn and hands over what the
 * stream brought (the watermarks, the indexes a signal wants seeded
 * afresh).  When a transaction finds the extension dropped, a step
 * returns: the worker's loop sees the drop and ends.
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
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "binding/publication.h"
#include "binding/tables.h"
#include "document/keyset.h"
#include "engine/engine_index.h"
#include "engine/seed.h"
#include "settings.h"
#include "ipc/shared.h"
#include "store/catalog_index.h"
#include "store/catalog_seed.h"
#include "store/catalog_signal.h"
#include "util/xact.h"

#define UUID_TEXT_LEN (UUID_LEN * 2 + 4 + 1)

typedef enum SeedState
{
	SEED_CHUNK_DUE,				/* read the next chunk */
	SEED_AWAIT_LOW,				/* chunk read: wait for its low watermark */
	SEED_AWAIT_HIGH,			/* in the window: wait for the high one */
	SEED_FINISH_DUE				/* all written: swap the next generation in */
} SeedState;

/* One seed in progress. */
typedef struct Seed
{
	EngineIndex *ei;
	MemoryContext context;		/* lives as long as the seed */
	MemoryContext chunk_context;	/* the chunk and the keys it drops */
	SeedState	state;
	int			nkeys;			/* root key columns */
	char	  **last_key;		/* cursor: last key written, NULL at start */
	char	  **max_key;		/* largest key at the start, NULL if none */
	List	   *chunk;			/* keys read (char ** rows), in key order */
	bool		final_chunk;	/* nothing lies beyond this chunk */
	char		low[UUID_TEXT_LEN];
	char		high[UUID_TEXT_LEN];
	XLogRecPtr	low_lsn;		/* the low watermark's commit: the version */
	int64		done;			/* root keys read so far */
	int64		total;			/* estimated root rows */
	int			shares;			/* seeds side by side when its chunk was read */
} Seed;

/* The worker's seeding: up to flusso.max_seeds seeds side by side. */
struct Seeder
{
	Engine	   *engine;
	char	   *publication;	/* flusso.publication when the worker started */
	MemoryContext context;		/* the worker's: outlives every seed */
	List	   *seeds;			/* Seed: those in progress, in the worker's
								 * context */
	bool		waits;			/* no seed could begin since the last look */
};

/* A transaction of the seed's own, with SPI; false when flusso is gone. */
static bool
begin_transaction(void)
{
	if (!xact_begin(true, NULL, 0))
		return false;
	SPI_connect();
	return true;
}

/* Commit it; the caller's memory context is current again (util/xact.c). */
static void
end_transaction(void)
{
	SPI_finish();
	xact_commit();
}

/* The phase of the seeded index, with the seed's progress. */
static void
report(Seed *seed, IndexPhase phase, const char *message)
{
	shared_report_phase(seed->ei->index->name, phase, message, seed->done, seed->total);
}

/* A key, copied into context. */
static char **
copy_key(MemoryContext context, char **key, int nkeys)
{
	char	  **copy = MemoryContextAlloc(context, sizeof(char *) * nkeys);

	for (int k = 0; k < nkeys; k++)
		copy[k] = MemoryContextStrdup(context, key[k]);
	return copy;
}

/*
 * Does the current catalog show every table the index reads in the
 * publication?  NULL if so, or why not, naming the first one missing.
 */
static char *
unpublished_table(EngineIndex *ei, const char *publication)
{
	Datum	   *relids = palloc(sizeof(Datum) * Max(list_length(ei->reads), 1));
	Oid			argtypes[2] = {OIDARRAYOID, TEXTOID};
	Datum		values[2];
	MemoryContext caller = CurrentMemoryContext;
	char	   *missing = NULL;
	int			n = 0;
	ListCell   *lc;

	foreach(lc, ei->reads)
		relids[n++] = ObjectIdGetDatum(((TableUse *) lfirst(lc))->relid);
	values[0] = PointerGetDatum(construct_array(relids, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
	values[1] = CStringGetTextDatum(publication);
	SPI_connect();
	if (SPI_execute_with_args("SELECT r.relid::pg_catalog.regclass::pg_catalog.text "
							  "FROM pg_catalog.unnest($1) r(relid) WHERE NOT EXISTS ("
							  "SELECT 1 FROM " PUBLICATION_TABLES_FROM
							  "WHERE t.pubname OPERATOR(pg_catalog.=) $2 "
							  "AND c.oid OPERATOR(pg_catalog.=) r.relid) ORDER BY 1",
							  2, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read publication \"%s\"", publication);
	if (SPI_processed > 0)
	{
		char	   *table = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		missing = MemoryContextStrdup(caller,
									  psprintf("waiting to seed: publication \"%s\" does not publish table %s",
											   publication, table));
	}
	SPI_finish();
	return missing;
}

/*
 * From now on, keep the keys the index's changes resolve to (apply.c), in
 * context, until capture_end() hands them back.
 */
static void
capture_begin(EngineIndex *ei, MemoryContext context)
{
	ei->captured = NIL;
	ei->capture_context = context;
	ei->capture = true;
}

static List *
capture_end(EngineIndex *ei)
{
	List	   *captured = ei->captured;

	ei->capture = false;
	ei->captured = NIL;
	return captured;
}

/* Write the index's documents to the next generation (a seed's), or not. */
static void
write_next(EngineIndex *ei, bool next)
{
	ei->next = next;
	ei->mirrored = 0;
	if (!next)
		(void) capture_end(ei);
}

/* Resume the saved seed of this version, if any and its generation is there. */
static bool
resume(Seed *seed, bool writes_next)
{
	SeedRow		row;

	/* only a generation that received every change since the worker started */
	if (!writes_next)
		return false;
	if (!catalog_read_seed(seed->ei->index->name, seed->ei->index->version,
						   seed->nkeys, seed->context, &row) ||
		!sink_next_exists(seed->ei->sink))
		return false;
	seed->last_key = row.last_key;
	seed->max_key = row.max_key;
	seed->done = row.done;
	seed->total = row.total;
	return true;
}

/*
 * Start afresh: the largest root key and an estimate of the rows, read as
 * the index's owner, an empty next generation, and the seed's row.
 */
static void
start(void *arg)
{
	Seed	   *seed = arg;
	char	  **largest = doc_largest_key(seed->ei->query, seed->ei->index->owner);

	seed->max_key = largest ? copy_key(seed->context, largest, seed->nkeys) : NULL;
	seed->total = seed->max_key ? doc_estimated_rows(seed->ei->query, seed->ei->index->owner) : 0;
	/* (the row first: an OpenSearch generation takes its estimate) */
	catalog_start_seed(seed->ei->index->name, seed->ei->index->version,
					   seed->max_key, seed->nkeys, seed->total);
	sink_next_begin(seed->ei->sink);
}

/*
 * Indexes with a seed to resume write to their next generation from the
 * start: the stream replays what it may have missed, and a seed of
 * another index may run first.  In the caller's transaction.
 */
void
seed_mark_resumable(Seeder *seeder)
{
	ListCell   *lc;

	foreach(lc, catalog_resumable_seeds())
	{
		EngineIndex *ei = engine_index(seeder->engine, lfirst(lc));

		if (ei && ei->needs_seed && !ei->broken &&
			sink_next_exists(ei->sink))
			write_next(ei, true);
	}
}

/*
 * The worker's seeding of the indexes of engine, in context (the worker's,
 * which outlives every seed: each lives in a child of it).
 */
Seeder *
seed_create(Engine *engine, const char *publication, MemoryContext context)
{
	Seeder	   *seeder = MemoryContextAllocZero(context, sizeof(Seeder));

	seeder->engine = engine;
	seeder->publication = MemoryContextStrdup(context, publication);
	seeder->context = context;
	return seeder;
}

/*
 * Begin (or resume) seeding ei, in transactions of its own, with the
 * seed's memory a child of parent.  NULL when it must wait for the
 * publication to cover its tables, or failed to start (and was isolated).
 */
static Seed *
begin_one(EngineIndex *ei, const char *publication, MemoryContext parent)
{
	MemoryContext context = AllocSetContextCreate(parent, "flusso seed",
												  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(context);
	Seed	   *seed = palloc0(sizeof(Seed));
	bool		writes_next = ei->next;
	char	   *waiting = NULL;
	bool		failed = false;

	seed->ei = ei;
	seed->context = context;
	seed->chunk_context = AllocSetContextCreate(context, "flusso seed chunk",
												ALLOCSET_DEFAULT_SIZES);
	seed->nkeys = ei->query->nkeys;
	seed->state = SEED_CHUNK_DUE;

	if (!begin_transaction())
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(context);
		return NULL;
	}
	/*
	 * Held until the next generation exists, so that a drop drops it too,
	 * and a change of sinks, which locks the row first, retires it.  A
	 * change that came first is seen once the row is ours.
	 */
	if (!catalog_lock_index_version(ei->index->name, ei->index->version, false))
		waiting = "waiting to seed: the index was dropped or replaced, the worker restarts";
	else if (!engine_index_sinks_current(ei))
		waiting = "waiting to seed: the index's sinks changed, the worker restarts";
	else
		waiting = unpublished_table(ei, publication);
	if (waiting)
		waiting = MemoryContextStrdup(context, waiting);
	else if (!resume(seed, writes_next) &&
			 !engine_attempt(ei, "could not start seeding", start, seed))
		failed = true;
	end_transaction();
	MemoryContextSwitchTo(old);

	if (waiting || failed)
	{
		/* a table left out of the publication: its changes are not seen */
		if (waiting)
			report(seed, PHASE_ERROR, waiting);
		MemoryContextDelete(context);
		return NULL;
	}
	write_next(ei, true);
	report(seed, PHASE_SEEDING, NULL);
	if (seed->last_key)
		ereport(LOG,
				(errmsg("flusso: seeding index \"%s\" from %s, resuming after " INT64_FORMAT " root rows",
						ei->index->name, ei->query->root_qualified, seed->done)));
	else
		ereport(LOG,
				(errmsg("flusso: seeding index \"%s\" from %s, about " INT64_FORMAT " root rows",
						ei->index->name, ei->query->root_qualified, seed->total)));
	return seed;
}

/* Is ei being seeded? */
static bool
seeding(const Seeder *seeder, const EngineIndex *ei)
{
	ListCell   *lc;

	foreach(lc, seeder->seeds)
	{
		if (((Seed *) lfirst(lc))->ei == ei)
			return true;
	}
	return false;
}

/*
 * Begin (or resume) seeding the indexes that need it and can start, until
 * flusso.max_seeds are in progress: one that waits for the publication
 * does not hold up the others.  False when one needed to begin and none
 * could.  Each seed lives in a child of the seeder's context until it
 * finishes or is abandoned.
 */
static bool
begin(Seeder *seeder)
{
	bool		wanted = false;
	bool		begun = false;

	for (EngineIndex *ei = engine_next_to_seed(seeder->engine, NULL);
		 ei && list_length(seeder->seeds) < flusso_max_seeds;
		 ei = engine_next_to_seed(seeder->engine, ei))
	{
		Seed	   *seed;

		if (seeding(seeder, ei))
			continue;
		wanted = true;
		seed = begin_one(ei, seeder->publication, seeder->context);
		if (seed)
		{
			MemoryContext old = MemoryContextSwitchTo(seeder->context);

			seeder->seeds = lappend(seeder->seeds, seed);
			MemoryContextSwitchTo(old);
			begun = true;
		}
	}
	return begun || !wanted;
}

/* Drop the seeds forgotten (NULL) from the list. */
static void
prune(Seeder *seeder)
{
	ListCell   *lc;

	foreach(lc, seeder->seeds)
	{
		if (lfirst(lc) == NULL)
			seeder->seeds = foreach_delete_current(seeder->seeds, lc);
	}
}

/*
 * Commit a watermark row into flusso.signal, and flush it: the stream
 * reads flushed WAL only, and the worker commits asynchronously, so the
 * watermark would otherwise wait for the WAL writer.  False when flusso
 * is gone.
 */
static bool
insert_watermark(Seed *seed, const char *kind, char *id)
{
	if (!begin_transaction())
		return false;
	strlcpy(id, catalog_insert_watermark(kind, seed->ei->index->name), UUID_TEXT_LEN);
	end_transaction();
	XLogFlush(XactLastCommitEnd);
	return true;
}

static void
forget(Seed **seed)
{
	write_next((*seed)->ei, false);
	MemoryContextDelete((*seed)->context);
	*seed = NULL;
}

/*
 * Read the chunk's keys as the index's owner: flusso.snapshot_chunk_size
 * of them, or fewer when the index's documents are dear, so that building
 * a chunk of each seed in progress keeps the other indexes waiting no
 * longer than a turn (engine_chunk_keys).
 */
static void
read_chunk(void *arg)
{
	Seed	   *seed = arg;
	MemoryContext old = MemoryContextSwitchTo(seed->chunk_context);
	int			limit = engine_chunk_keys(seed->ei, flusso_snapshot_chunk_size, seed->shares);

	seed->chunk = doc_read_keys(seed->ei->query, seed->ei->index->owner,
								seed->last_key, seed->max_key, limit);
	seed->final_chunk = list_length(seed->chunk) < limit;
	MemoryContextSwitchTo(old);
}

/*
 * The next chunk: low watermark, keys, high watermark, each committed in
 * a transaction of its own.  The keys are built when the high watermark
 * arrives in the stream.  If they cannot be read, the index is isolated
 * and the seed forgotten (*seed is NULL then).
 */
static void
read_next_chunk(Seed **seedp)
{
	Seed	   *seed = *seedp;
	bool		ok;

	Assert(seed->state == SEED_CHUNK_DUE);
	MemoryContextReset(seed->chunk_context);
	seed->chunk = NIL;
	if (!insert_watermark(seed, SIGNAL_LOW, seed->low) || !begin_transaction())
		return;
	ok = engine_attempt(seed->ei, "could not read a chunk to seed", read_chunk, seed);
	end_transaction();
	if (!ok)
	{
		forget(seedp);
		return;
	}
	if (insert_watermark(seed, SIGNAL_HIGH, seed->high))
		seed->state = SEED_AWAIT_LOW;
}

static void
swap(void *arg)
{
	EngineIndex *ei = arg;

	ei->mirrored = 0;
	sink_next_swap(ei->sink);
}

/*
 * Every chunk is written: swap the next generation in, in a transaction of
 * its own between two batches (the one step of a seed that lasts as long
 * as building the table sink's secondary indexes), and say the index is
 * live.
 */
static void
finish(Seed **seed)
{
	EngineIndex *ei = (*seed)->ei;
	const char *name = ei->index->name;
	bool		current;

	Assert((*seed)->state == SEED_FINISH_DUE);
	if (!begin_transaction())
		return;
	/* a definition or sinks changed meanwhile: their own seed follows the restart */
	current = catalog_lock_index_version(name, ei->index->version, true) &&
		engine_index_sinks_current(ei);
	/* a view on the documents table, say: this index stops, not all */
	if (current && !engine_attempt(ei, "could not swap in the seeded documents", swap, ei))
		current = false;
	if (current)
	{
		catalog_mark_seeded(name);
		/* requests that this seed answered: they arrived before it started */
		catalog_forget_answered_signals(name, signal_request_kinds());
		catalog_forget_seed(name);
	}
	end_transaction();
	if (current)
	{
		engine_progressed(ei);
		engine_needs_seed(ei, false);
		report(*seed, PHASE_LIVE, NULL);
		ereport(LOG,
				(errmsg("flusso: index \"%s\" seeded: " INT64_FORMAT " root rows read",
						name, (*seed)->done)));
	}
	forget(seed);
}

/* The chunk's keys less those the stream built while its window was open. */
typedef struct ChunkKeys
{
	Seed	   *seed;
	List	   *captured;
	List	   *keys;			/* out */
} ChunkKeys;

static void
keys_to_build(void *arg)
{
	ChunkKeys  *chunk = arg;
	MemoryContext old = MemoryContextSwitchTo(chunk->seed->chunk_context);

	chunk->keys = doc_keys_except(chunk->seed->ei->query, chunk->seed->ei->index->owner,
								  chunk->seed->chunk, chunk->captured);
	MemoryContextSwitchTo(old);
}

/* Save the cursor: the last key of the chunk, and the keys read so far. */
static void
save_cursor(Seed *s)
{
	s->done += list_length(s->chunk);
	if (s->chunk != NIL)
		s->last_key = copy_key(s->context, llast(s->chunk), s->nkeys);
	catalog_save_seed(s->ei->index->name, s->last_key, s->nkeys, s->done);
}

/*
 * The high watermark arrived: build and write what the stream did not,
 * save the cursor with it, and finish after the last chunk.  The chunk's
 * documents are versioned by its low watermark: every change before it
 * is in them, and the stream rebuilt those changed after it.
 */
static void
close_chunk(Seed **seed)
{
	Seed	   *s = *seed;
	ChunkKeys	chunk = {s, capture_end(s->ei), NIL};
	int64		written;

	if (!engine_attempt(s->ei, "could not seed a chunk", keys_to_build, &chunk) ||
		!engine_build(s->ei, chunk.keys, s->low_lsn, &written))
	{
		/* isolated and marked for seeding by the engine */
		forget(seed);
		return;
	}
	save_cursor(s);
	if (s->final_chunk)
	{
		/* the estimate is exact now */
		s->total = s->done;
		s->state = SEED_FINISH_DUE;
	}
	else
		s->state = SEED_CHUNK_DUE;
	report(s, PHASE_SEEDING, NULL);
}

/*
 * A watermark arrived in the stream: true if it is one of this seed's.
 * The low one opens the chunk's window (what changes now, the stream
 * builds); the high one closes it, and the rest of the chunk is built.
 */
static bool
take_watermark(Seed **seed, const char *id, XLogRecPtr lsn)
{
	Seed	   *s = *seed;

	if (s && s->state == SEED_AWAIT_LOW && strcmp(id, s->low) == 0)
	{
		s->state = SEED_AWAIT_HIGH;
		s->low_lsn = lsn;
		capture_begin(s->ei, s->chunk_context);
		return true;
	}
	if (s && s->state == SEED_AWAIT_HIGH && strcmp(id, s->high) == 0)
	{
		catalog_forget_watermarks(s->low, s->high);
		close_chunk(seed);
		return true;
	}
	return false;
}

/*
 * Move the seeding on, one step: begin seeds for indexes that need one,
 * up to flusso.max_seeds side by side, then, for each seed in progress,
 * read its next chunk or swap it in.  When none could begin (the
 * publication does not cover an index's tables, its sinks or definition
 * changed), trying again waits until the catalog may have changed (look),
 * or a signal asked for another seed (seed_wake).
 */
void
seed_step(Seeder *seeder, bool look)
{
	ListCell   *lc;

	if (list_length(seeder->seeds) < flusso_max_seeds &&
		engine_next_to_seed(seeder->engine, NULL) != NULL && (look || !seeder->waits))
		seeder->waits = !begin(seeder);
	foreach(lc, seeder->seeds)
	{
		Seed	  **seed = (Seed **) &lfirst(lc);

		if (*seed && (*seed)->state == SEED_FINISH_DUE)
			finish(seed);
		if (*seed && (*seed)->state == SEED_CHUNK_DUE)
		{
			(*seed)->shares = list_length(seeder->seeds);
			read_next_chunk(seed);
		}
	}
	prune(seeder);
}

/* Is a seed ready for its next step, so that the loop must not sleep? */
bool
seed_due(const Seeder *seeder)
{
	ListCell   *lc;

	foreach(lc, seeder->seeds)
	{
		Seed	   *seed = lfirst(lc);

		if (seed->state == SEED_CHUNK_DUE || seed->state == SEED_FINISH_DUE)
			return true;
	}
	return false;
}

/* Is a seed in progress? */
bool
seed_running(const Seeder *seeder)
{
	return seeder->seeds != NIL;
}

/* A signal asked for a seed: the next step may begin one without a look. */
void
seed_wake(Seeder *seeder)
{
	seeder->waits = false;
}

/*
 * The watermarks a batch ended with, in its transaction, after its changes
 * were applied: those of the seed in progress move it on; those of an
 * earlier run or of a seed abandoned are deleted.
 */
void
seed_take_watermarks(Seeder *seeder, List *watermarks)
{
	ListCell   *lc;

	if (watermarks == NIL)
		return;
	SPI_connect();
	foreach(lc, watermarks)
	{
		Signal	   *signal = lfirst(lc);
		bool		taken = false;
		ListCell   *sc;

		foreach(sc, seeder->seeds)
		{
			if (!taken && lfirst(sc) != NULL)
				taken = take_watermark((Seed **) &lfirst(sc), signal->id, signal->lsn);
		}
		if (!taken)
			catalog_forget_signal_of_kinds(signal->id, signal_watermark_kinds());
	}
	prune(seeder);
	SPI_finish();
}

/*
 * The indexes (EngineIndex) a signal marked for seeding afresh, in the
 * batch's transaction: their cursors are forgotten, and a seed of one in
 * progress is abandoned; the next step begins it again.
 */
void
seed_restart(Seeder *seeder, List *indexes)
{
	ListCell   *lc;

	foreach(lc, indexes)
	{
		EngineIndex *ei = lfirst(lc);

		ListCell   *sc;

		catalog_forget_seed(ei->index->name);
		foreach(sc, seeder->seeds)
		{
			if (lfirst(sc) != NULL && ((Seed *) lfirst(sc))->ei == ei)
				forget((Seed **) &lfirst(sc));
		}
	}
	prune(seeder);
}

/* Watermarks of an earlier run count for nothing: delete them. */
void
seed_forget_watermarks(void)
{
	if (!xact_begin(true, NULL, 0))
		return;
	catalog_forget_signals_of_kinds(signal_watermark_kinds());
	xact_commit();
}

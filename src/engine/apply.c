/*-------------------------------------------------------------------------
 *
 * apply.c
 *	  Applies a batch of changes to the documents of every index: resolve
 *	  each change to the root keys it affects (deduplicated per index), then
 *	  one statement per index builds those documents from the current rows
 *	  and writes them through the index's sinks — documents that built, and
 *	  deletes for keys that built nothing — as the index's owner.
 *
 * The only place where a change batch (cdc/) and a build statement
 * (document/) meet.  While an index is seeded, its writes go to the
 * current and the next generation, and the keys its changes resolve to
 * can be captured for the seed to drop from its chunk; engine_build()
 * writes a chunk, to the next generation only.  Documents carry a version
 * for the sinks that ship later: the batch's last commit (every change up
 * to it is visible when they are built), or the chunk's low watermark.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "binding/tables.h"
#include "util/string_hash.h"
#include "document/docid.h"
#include "document/session.h"
#include "engine/engine_index.h"
#include "engine/engine_stream.h"
#include "engine/pending.h"
#include "ipc/strikes.h"
#include "util/spi_cache.h"

/*
 * A key a change resolved to: its document id and, for composite keys,
 * the parts.  The set is keyed by the id string it points to
 * (util/string_hash.c): a batch keeps up to KEY_SET_LIMIT.
 */
typedef struct ResolvedKey
{
	char	   *id;				/* the hash key: a pointer to the string */
	char	  **parts;
} ResolvedKey;

typedef struct ApplyState
{
	EngineIndex *ei;
	MemoryContext context;		/* of keys and their parts: outlives SPI */
	HTAB	   *keys;			/* ResolvedKey by id */
	List	  **rule_inputs;	/* per rule: values still to walk up */
	bool		truncate_root;
	bool		rebuild_all;
	SinkTarget	target;			/* the generations written */
	XLogRecPtr	version;		/* documents are built after this commit */
	int64		written;
} ApplyState;

static void
add_key(ApplyState *st, char **parts)
{
	char	   *id;
	ResolvedKey *key;
	bool		found;
	int			nkeys = st->ei->resolver->nkeys;

	id = doc_id_join(parts, nkeys);
	key = hash_search(st->keys, &id, HASH_ENTER, &found);
	if (!found)
	{
		key->id = MemoryContextStrdup(st->context, id);
		key->parts = MemoryContextAlloc(st->context, sizeof(char *) * nkeys);
		for (int i = 0; i < nkeys; i++)
			key->parts[i] = MemoryContextStrdup(st->context, parts[i]);
	}
	/* a StringInfo starts at 1 kB: keep it for no longer than this call */
	pfree(id);
}

/* The values of rule's columns in one row version; false if any is unknown. */
static bool
row_values(const ThinChange *change, const ThinValue *row, const ResolveRule *rule,
		   char **out)
{
	int			n = 0;
	ListCell   *lc;

	if (row == NULL)
		return false;
	foreach(lc, rule->columns)
	{
		bool		found = false;

		for (int c = 0; c < change->ncolumns; c++)
		{
			if (strcmp(change->columns[c], lfirst(lc)) == 0 && row[c].kind == THIN_TEXT)
			{
				out[n++] = row[c].text;
				found = true;
				break;
			}
		}
		if (!found)
			return false;
	}
	return true;
}

static void
collect(ApplyState *st, const ThinChange *change)
{
	ListCell   *lc;
	int			r = 0;

	foreach(lc, st->ei->resolver->rules)
	{
		ResolveRule *rule = lfirst(lc);
		char	   *values[INDEX_MAX_KEYS];
		const ThinValue *rows[2] = {change->old_values, change->new_values};

		if (rule->relid != change->relid)
		{
			r++;
			continue;
		}
		if (change->op == THIN_TRUNCATE)
		{
			if (rule->root)
				st->truncate_root = true;
			else
				st->rebuild_all = true;
		}
		for (int v = 0; v < 2 && change->op != THIN_TRUNCATE; v++)
		{
			if (!row_values(change, rows[v], rule, values))
				continue;
			if (rule->steps == NULL)
				add_key(st, values);
			else
				st->rule_inputs[r] = lappend(st->rule_inputs[r], pstrdup(values[0]));
		}
		r++;
	}
}

static List *
run_text_query(const char *sql, List *inputs)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(list_length(inputs), 1));
	Oid			types[1] = {TEXTARRAYOID};
	Datum		values[1];
	List	   *out = NIL;
	int			n = 0;
	ListCell   *lc;

	foreach(lc, inputs)
		elems[n++] = CStringGetTextDatum(lfirst(lc));
	values[0] = PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
	if (spi_execute_by_keys(sql, n, 1, types, values, true) != SPI_OK_SELECT)
		elog(ERROR, "could not resolve changes: %s", sql);
	for (uint64 i = 0; i < SPI_processed; i++)
		out = lappend(out, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
	return out;
}

/*
 * Walk the rules' values up to root keys, add every key of a table
 * truncated, and empty the documents of a root truncated: what the
 * chunk's changes resolve to is then in st->keys.  Under the index's build
 * session, with SPI connected.
 */
static void
resolve_keys(ApplyState *st)
{
	EngineIndex *ei = st->ei;
	ListCell   *lc;
	int			r = 0;

	foreach(lc, ei->resolver->rules)
	{
		ResolveRule *rule = lfirst(lc);
		List	   *inputs = st->rule_inputs[r++];

		for (ResolveStep *s = rule->steps; s && inputs != NIL; s = s->next)
			inputs = run_text_query(s->sql, inputs);
		if (rule->steps)
		{
			ListCell   *ic;

			foreach(ic, inputs)
			{
				char	   *parts[1] = {lfirst(ic)};

				add_key(st, parts);
			}
		}
	}
	if (st->rebuild_all && ei->resolver->all_keys_sql)
	{
		ListCell   *ic;

		foreach(ic, run_text_query(psprintf("SELECT x FROM (%s) a(x) WHERE $1 IS NOT NULL",
											ei->resolver->all_keys_sql), NIL))
		{
			char	   *parts[1] = {lfirst(ic)};

			add_key(st, parts);
		}
	}
	if (st->truncate_root)
		sink_truncate(ei->sink, st->target, st->version);
}

/* Resolve, build and write one index (a seed's chunk); in a subtransaction. */
static void
apply_index(void *arg)
{
	ApplyState *st = arg;
	EngineIndex *ei = st->ei;
	BuildSession session;
	HASH_SEQ_STATUS scan;
	ResolvedKey *key;
	int			nkeys = ei->resolver->nkeys;
	Datum	  **parts = palloc(sizeof(Datum *) * nkeys);
	Datum	   *ids = palloc(sizeof(Datum) * ENGINE_BUILD_SLICE);

	for (int k = 0; k < nkeys; k++)
		parts[k] = palloc(sizeof(Datum) * ENGINE_BUILD_SLICE);
	st->written = 0;
	/* before any value of the stream is used: may the owner read them? */
	engine_session_begin(ei, &session);
	resolve_keys(st);

	/* build and write the set a slice at a time: statements stay small */
	hash_seq_init(&scan, st->keys);
	for (;;)
	{
		int			n = 0;

		while (n < ENGINE_BUILD_SLICE && (key = hash_seq_search(&scan)) != NULL)
		{
			ids[n] = CStringGetTextDatum(key->id);
			for (int k = 0; k < nkeys; k++)
				parts[k][n] = CStringGetTextDatum(key->parts[k]);
			n++;
		}
		if (n == 0)
			break;
		st->written += engine_write_slice(ei, st->target, st->version, parts, ids, n);
		if (n < ENGINE_BUILD_SLICE)
			break;
	}
	engine_session_end(&session);
}

/*
 * Resolve one index's changes and add the keys to the documents it owes,
 * built later by engine_build_owed(); in a subtransaction.
 */
static void
resolve_index(void *arg)
{
	ApplyState *st = arg;
	EngineIndex *ei = st->ei;
	BuildSession session;
	HASH_SEQ_STATUS scan;
	ResolvedKey *key;

	engine_session_begin(ei, &session);
	resolve_keys(st);
	engine_session_end(&session);
	hash_seq_init(&scan, st->keys);
	while ((key = hash_seq_search(&scan)) != NULL)
		pending_add(ei->owed.filling, key->id);
}

/*
 * The state of each index for a chunk of changes (or a seed's chunk, with
 * target SINK_NEXT), built after the commit at version.
 */
static List *
start_chunk(List *indexes, SinkTarget target, XLogRecPtr version)
{
	List	   *states = NIL;
	ListCell   *lc;

	foreach(lc, indexes)
	{
		EngineIndex *ei = lfirst(lc);
		ApplyState *st = palloc0(sizeof(ApplyState));

		st->ei = ei;
		st->context = CurrentMemoryContext;
		st->target = target == SINK_NEXT ? SINK_NEXT
			: ei->next ? SINK_CURRENT_AND_NEXT : SINK_CURRENT;
		st->version = version;
		st->keys = string_hash_create("flusso resolved keys", sizeof(ResolvedKey),
									  CurrentMemoryContext);
		st->rule_inputs = ei->broken ? NULL
			: palloc0(sizeof(List *) * Max(list_length(ei->resolver->rules), 1));
		states = lappend(states, st);
	}
	return states;
}

/* Keep the keys st resolved to, for a seed to drop from its chunk. */
static void
capture_keys(ApplyState *st)
{
	EngineIndex *ei = st->ei;
	MemoryContext old = MemoryContextSwitchTo(ei->capture_context);
	int			nkeys = ei->resolver->nkeys;
	HASH_SEQ_STATUS scan;
	ResolvedKey *key;

	hash_seq_init(&scan, st->keys);
	while ((key = hash_seq_search(&scan)) != NULL)
	{
		char	  **parts = palloc(sizeof(char *) * nkeys);

		for (int k = 0; k < nkeys; k++)
			parts[k] = pstrdup(key->parts[k]);
		ei->captured = lappend(ei->captured, parts);
	}
	MemoryContextSwitchTo(old);
}

/* Did the changes of the chunk touch this index at all? */
static bool
has_work(const ApplyState *st)
{
	if (st->truncate_root || st->rebuild_all || hash_get_num_entries(st->keys) > 0)
		return true;
	for (int r = 0; r < list_length(st->ei->resolver->rules); r++)
	{
		if (st->rule_inputs[r] != NIL)
			return true;
	}
	return false;
}

/*
 * Resolve what the chunk's changes did to each index, and build the
 * documents now (a seed's chunk) or add them to those it owes (live
 * changes).  Returns the documents written.
 */
static int64
finish_chunk(List *states, bool build_now)
{
	ListCell   *lc;
	int64		written = 0;

	foreach(lc, states)
	{
		ApplyState *st = lfirst(lc);

		if (st->ei->broken || !has_work(st))
			continue;
		if (engine_attempt(st->ei, NULL, build_now ? apply_index : resolve_index, st))
		{
			/* committed with the caller's transaction, or the worker dies */
			strikes_progressed(st->ei->index->name);
			written += st->written;
			if (st->ei->capture)
				capture_keys(st);
		}
	}
	return written;
}

/*
 * Keys (and values still to resolve) a batch gathers before they are built:
 * a document changed many times within that many keys is built once.  An
 * entry takes about 150 bytes.
 */
#define KEY_SET_LIMIT 200000

static int64
resolved_count(List *states)
{
	ListCell   *lc;
	int64		n = 0;

	foreach(lc, states)
	{
		ApplyState *st = lfirst(lc);

		n += hash_get_num_entries(st->keys);
		for (int r = 0; st->rule_inputs && r < list_length(st->ei->resolver->rules); r++)
			n += list_length(st->rule_inputs[r]);
	}
	return n;
}

/*
 * Start resolving a batch: engine_resolve() then takes it a part at a
 * time.  The documents it owes are built after its last commit.
 */
void
engine_resolve_begin(Engine *engine, ChangeBatch *batch)
{
	ListCell   *lc;

	batch_begin_scan(batch);
	engine->owed_version = batch->last_commit_end;
	/* a set that owes nothing yet owes changes read, and committed, from here on */
	foreach(lc, engine->indexes)
	{
		EngineIndex *ei = lfirst(lc);

		if (ei->owed.filling && pending_is_empty(ei->owed.filling))
		{
			ei->owed.filling_after = batch->read_from;
			ei->owed.filling_since = batch->oldest_commit;
		}
	}
}

/*
 * Resolve the next part of a batch, in the caller's transaction: its
 * changes become the keys of the documents each index owes (a set of up to
 * KEY_SET_LIMIT keys at a time, so that a batch of any size is resolved in
 * bounded memory), built by engine_build_pending() once the worker chooses
 * to.  A root TRUNCATE empties the index now, in stream order.  The
 * batch's notes (signals) are not row changes: the engine reads
 * them (engine/signals.c).  True while the batch has more.
 */
bool
engine_resolve(Engine *engine, ChangeBatch *batch)
{
	MemoryContext chunk_context = AllocSetContextCreate(CurrentMemoryContext,
														"flusso resolve chunk",
														ALLOCSET_DEFAULT_SIZES);
	MemoryContext caller = MemoryContextSwitchTo(chunk_context);
	List	   *states;
	ThinChange	change;
	int			n = 0;
	bool		more;
	ListCell   *lc;

	states = start_chunk(engine->indexes, SINK_CURRENT, engine->owed_version);
	while ((more = batch_next(batch, &change)))
	{
		foreach(lc, states)
		{
			ApplyState *st = lfirst(lc);

			if (!st->ei->broken)
				collect(st, &change);
		}
		/* counting is not free: look every thousand changes */
		if (++n % 1000 == 0 && resolved_count(states) >= KEY_SET_LIMIT)
			break;
	}
	(void) finish_chunk(states, false);
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(chunk_context);
	return more;
}

/*
 * Build and write the documents of a seed's chunk, keys (char ** rows of
 * key parts), to the next generation of one index, built after the commit
 * at version (the chunk's low watermark).  False when the index failed,
 * and was isolated.
 */
bool
engine_build(EngineIndex *ei, List *keys, XLogRecPtr version, int64 *written)
{
	MemoryContext context = AllocSetContextCreate(CurrentMemoryContext, "flusso build",
												  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(context);
	List	   *states = start_chunk(list_make1(ei), SINK_NEXT, version);
	TimestampTz began = GetCurrentTimestamp();
	ListCell   *lc;

	foreach(lc, keys)
		add_key(linitial(states), lfirst(lc));
	*written = finish_chunk(states, true);
	pace_note(&ei->pace, list_length(keys), began);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(context);
	return !ei->broken;
}


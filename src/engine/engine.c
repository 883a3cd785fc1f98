/*-------------------------------------------------------------------------
 *
 * engine.c
 *	  Loads and compiles every index of the database: what it reads (as
 *	  flusso_check() checks it), its build statement, its resolution rules,
 *	  its sinks and the statements that write to them; and isolates an index
 *	  that fails.
 *
 * An index that cannot be compiled or built goes to phase error with the
 * reason, is marked for re-seeding (its changes are skipped from then on),
 * and the others go on; engine_retry_broken() tells when it builds again.
 * Work on one index runs in engine_attempt(), which isolates it on
 * failure and keeps it in hand for strikes.c while it runs.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "cdc/options.h"
#include "binding/ready.h"
#include "binding/tables.h"
#include "util/access.h"
#include "util/attempt.h"
#include "document/build.h"
#include "document/docid.h"
#include "document/resolve.h"
#include "document/search_vector.h"
#include "document/session.h"
#include "sink/sink.h"
#include "store/catalog_index.h"
#include "store/catalog_seed.h"
#include "engine/engine_index.h"
#include "engine/engine_stream.h"
#include "engine/pending.h"
#include "ipc/shared.h"
#include "ipc/strikes.h"

/*
 * Isolate an index that failed: phase error with the reason, skipped from
 * now on, and marked for re-seeding in the caller's transaction, since
 * the changes it skips are lost to it.
 */
void
engine_index_failed(EngineIndex *ei, const char *message)
{
	DatabaseEntry *entry;

	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("flusso index \"%s\" stopped: %s", ei->index->name, message),
			 errdetail("Its documents are no longer kept up to date; the others go on."),
			 errhint("Fix what flusso_check() reports; the index is then seeded again.")));
	ei->broken = true;
	ei->capture = false;
	ei->next = false;
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry = shared_database(MyDatabaseId, false);
	if (entry)
	{
		shared_set_phase(entry, ei->index->name, PHASE_ERROR, message);
		shared_record_error(entry, psprintf("index \"%s\": %s", ei->index->name, message));
	}
	LWLockRelease(flusso_shared->lock);

	/* a seed in progress cannot resume: the changes skipped miss its next generation */
	sink_next_discard(ei->sink);
	catalog_mark_for_seeding(ei->index->name, false);
	catalog_forget_seed(ei->index->name);
}

/* Why an index whose build outlasted flusso.build_timeout is set aside. */
static char *
timed_out_message(const char *what)
{
	return psprintf("%s%sbuilding this index took longer than flusso.build_timeout (%d ms), and was canceled; the index is set aside until its definition is replaced or flusso_resnapshot() is called (flusso_check() says what its documents cost)",
					what ? what : "", what ? ": " : "", flusso_build_timeout);
}

/*
 * Run action(arg), a piece of work on one index, in a subtransaction.  If
 * it fails, the index is isolated with the reason (prefixed by what, when
 * given) as flusso_status() may show it to any flusso_admin member: an
 * error that may quote a row value is logged whole and shown by its
 * SQLSTATE (util/attempt.c).  While it runs, the index is in hand
 * (strikes.c): should the worker die, the index is blamed.  It may last
 * flusso.build_timeout: an index whose work takes longer is canceled and
 * set aside, until its definition is replaced or flusso_resnapshot() asks
 * for it again, rather than tried again and again, each time keeping the
 * others waiting that long.
 */
bool
engine_attempt(EngineIndex *ei, const char *what, void (*action) (void *arg), void *arg)
{
	ErrorData  *error;
	bool		ok;
	bool		timed_out;
	char	   *shown;

	strikes_begin(ei->index->name, ei->index->version);
	ok = attempt_error_within(action, arg, flusso_build_timeout, &error, &timed_out);
	strikes_end();
	if (ok)
		return true;
	if (timed_out)
	{
		ereport(LOG,
				(errmsg("flusso index \"%s\": %s%sbuilding it took longer than flusso.build_timeout (%d ms)",
						ei->index->name, what ? what : "", what ? ": " : "", flusso_build_timeout)));
		engine_index_failed(ei, timed_out_message(what));
		strikes_set_aside(ei->index->name, ei->index->version);
		ei->set_aside = true;
		return false;
	}
	shown = attempt_message_for_status(error);
	if (strcmp(shown, error->message) != 0)
		ereport(LOG,
				(errmsg("flusso index \"%s\": %s%s%s", ei->index->name,
						what ? what : "", what ? ": " : "", error->message)));
	engine_index_failed(ei, what ? psprintf("%s: %s", what, shown) : shown);
	return false;
}

/*
 * Everything an index needs to be built, from the system catalogs: what it
 * reads (checked as flusso_check() checks it), its build statement, its
 * resolution rules and its write statements.
 */
static void
compile_index(void *arg)
{
	EngineIndex *ei = arg;
	int			ids;

	ei->reads = bind_index_ready(ei->index);
	ei->query = doc_build_query(ei->index->schema);
	ei->resolver = doc_compile_resolver(ei->index->schema);
	ids = ei->query->nparams + ei->query->nkeys + 1;	/* the document ids */
	for (int target = 0; target < SINK_TARGETS; target++)
		ei->apply_sql[target] = sink_write_sql(ei->sink, (SinkTarget) target,
											   ei->query->sql, ids);
}

/*
 * Names, versions, owners and sinks, in order: a change of any reloads the
 * engine.
 */
static char *
engine_signature(void)
{
	return catalog_indexes_signature(sink_signature_sql("name"));
}

/* The names of the indexes flusso.index marks for seeding. */
static List *
indexes_to_seed(void)
{
	return catalog_indexes_to_seed();
}

static bool
list_has_string(List *list, const char *s)
{
	ListCell   *lc;

	foreach(lc, list)
	{
		if (strcmp(lfirst(lc), s) == 0)
			return true;
	}
	return false;
}

/* Is the index there now?  Its row stays locked until the transaction ends. */
static bool
index_still_there(const char *name)
{
	return catalog_share_index(name);
}

/* The index is to be seeded, from now on and after a restart. */
static void
mark_for_seeding(EngineIndex *ei)
{
	catalog_mark_for_seeding(ei->index->name, false);
	ei->needs_seed = true;
}

/*
 * Add what ei reads from each table to *reads (the output plugin's
 * "reads": an UPDATE that changes none of them is not emitted), and the
 * tables it may read more of than it says to *unknown.
 */
static void
add_reads(const EngineIndex *ei, List **reads, List **unknown)
{
	ListCell   *lc;
	ListCell   *tc;

	foreach(lc, ei->reads)
	{
		TableUse   *use = lfirst(lc);

		if (use->columns_unknown)
			cdc_columns_add(unknown, use->nspname, use->relname, NIL);
		else
		{
			cdc_columns_add(reads, use->nspname, use->relname, use->columns);
			cdc_columns_add(reads, use->nspname, use->relname, use->key_columns);
			cdc_columns_add(reads, use->nspname, use->relname, use->old_key_columns);
		}
	}
	/* what resolution reads of a table too, if the index says it reads it */
	foreach(lc, ei->resolver->rules)
	{
		ResolveRule *rule = lfirst(lc);

		foreach(tc, ei->reads)
		{
			if (((TableUse *) lfirst(tc))->relid == rule->relid)
				break;
		}
		if (tc == NULL)
			cdc_columns_add(unknown, rule->nspname, rule->relname, NIL);
		else
			cdc_columns_add(reads, rule->nspname, rule->relname, rule->columns);
	}
}

/* Load and compile every index, in a transaction, in the current context. */
Engine *
engine_load(const char *publication)
{
	Engine	   *engine = palloc0(sizeof(Engine));
	List	   *specs = NIL;
	List	   *reads = NIL;
	List	   *unknown = NIL;
	List	   *to_seed = indexes_to_seed();
	ListCell   *lc;

	engine->signature = engine_signature();
	engine->signal_relid = get_relname_relid("signal", get_namespace_oid(FLUSSO_SCHEMA, false));
	cdc_columns_add(&specs, FLUSSO_SCHEMA, "signal",
					list_make4("id", "kind", "index_name", "detail"));
	foreach(lc, catalog_load_indexes())
	{
		EngineIndex *ei = palloc0(sizeof(EngineIndex));
		ListCell   *rc;

		ei->index = lfirst(lc);
		ei->needs_seed = list_has_string(to_seed, ei->index->name);
		/*
		 * A restore brings definitions, not the extension's tables; an index
		 * dropped since it was read keeps its table dropped.
		 */
		ei->sink = sink_for_index(ei->index->name, ei->index->owner, ei->index->schema);
		if (sink_missing(ei->sink) && index_still_there(ei->index->name))
			sink_create(ei->sink);
		/* a sink added, or restored without its generations */
		if (!ei->needs_seed && sink_needs_seed(ei->sink) && index_still_there(ei->index->name))
			mark_for_seeding(ei);
		engine->ships |= ei->sink->server != NULL;
		if (strikes_aside(ei->index->name, ei->index->version) == STRIKE_OVERRAN)
		{
			ei->set_aside = true;
			engine_index_failed(ei, psprintf("building this index ran past flusso.build_timeout (%d ms) and would not end when canceled (a function it calls catches the cancel), so the worker exited to end it; the index is set aside until its definition is replaced or flusso_resnapshot() is called",
											 flusso_build_timeout));
		}
		else if (strikes_aside(ei->index->name, ei->index->version) == STRIKE_TIMED_OUT)
		{
			ei->set_aside = true;
			engine_index_failed(ei, timed_out_message(NULL));
		}
		else if (strikes_of(ei->index->name, ei->index->version) >= STRIKES_LIMIT)
		{
			ei->set_aside = true;
			engine_index_failed(ei, psprintf("the worker died %d times in a row while working on this index, which is set aside until its definition is replaced or flusso_resnapshot() is called",
											 STRIKES_LIMIT));
		}
		else if (!engine_attempt(ei, NULL, compile_index, ei))
			;
		else
		{
			foreach(rc, ei->resolver->rules)
			{
				ResolveRule *rule = lfirst(rc);

				cdc_columns_add(&specs, rule->nspname, rule->relname, rule->columns);
			}
			add_reads(ei, &reads, &unknown);
		}
		engine->indexes = lappend(engine->indexes, ei);
	}
	foreach(lc, unknown)
	{
		ColumnSpec *spec = lfirst(lc);

		reads = cdc_columns_forget(reads, spec->nspname, spec->relname);
	}
	engine->plugin_options = cdc_plugin_options(publication, specs, reads);
	/*
	 * flusso.work_mem bounds what the indexes owe, together: each of the
	 * two sets of each index keeps a share in memory (pending.c spills
	 * past it)
	 */
	foreach(lc, engine->indexes)
	{
		EngineIndex *ei = lfirst(lc);
		Size		limit = Max((Size) flusso_work_mem * 1024 / list_length(engine->indexes) / 2,
								(Size) 1024 * 1024);

		ei->owed.filling = pending_create(CurrentMemoryContext, limit);
		ei->owed.draining = pending_create(CurrentMemoryContext, limit);
	}
	return engine;
}

/* Was the engine compiled from the definitions the catalog holds now? */
bool
engine_is_current(Engine *engine)
{
	return strcmp(engine_signature(), engine->signature) == 0;
}

/*
 * Are ei's sinks, as flusso.sink holds them now, those it was compiled
 * with?  Read with a snapshot of its own, taken now: the caller holds the
 * index's row, which flusso_set_sinks() locks before it changes them.
 */
bool
engine_index_sinks_current(const EngineIndex *ei)
{
	IndexSink  *now;

	PushActiveSnapshot(GetTransactionSnapshot());
	now = sink_for_index(ei->index->name, ei->index->owner, ei->index->schema);
	PopActiveSnapshot();
	return sink_same(ei->sink, now);
}

/* The output plugin's options: the columns every index needs. */
List *
engine_plugin_options(Engine *engine)
{
	return engine->plugin_options;
}

/* flusso.signal, whose rows the stream hands back as signals */
Oid
engine_signal_relid(Engine *engine)
{
	return engine->signal_relid;
}

/* Once loaded: each index live, waiting to be seeded, or in error. */
void
engine_report_phases(Engine *engine)
{
	DatabaseEntry *entry;
	ListCell   *lc;

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry = shared_database(MyDatabaseId, false);
	foreach(lc, engine->indexes)
	{
		EngineIndex *ei = lfirst(lc);

		if (entry && !ei->broken)
			shared_set_phase(entry, ei->index->name,
							 ei->needs_seed ? PHASE_SEEDING : PHASE_LIVE, NULL);
	}
	LWLockRelease(flusso_shared->lock);
}

/*
 * The names of the indexes that read a table replaced under its name since
 * they were compiled: the name a definition gives now reads another table
 * (a swap by rename, as migrations and online rebuilds do; a table dropped
 * and created again), or none (renamed away, dropped, its schema too).
 * The worker follows the table it compiled an index against, and the
 * publication covers tables, not names, so the table the name reads now
 * changes unseen until the index is compiled again.  Each index is named
 * once; looked up in the system caches, in the caller's transaction.
 */
List *
engine_replaced_tables(Engine *engine)
{
	List	   *names = NIL;
	ListCell   *lc;

	foreach(lc, engine->indexes)
	{
		EngineIndex *ei = lfirst(lc);
		ListCell   *tc;

		if (ei->broken || ei->replaced)
			continue;
		foreach(tc, ei->reads)
		{
			TableUse   *table = lfirst(tc);
			Oid			schema = get_namespace_oid(table->nspname, true);

			if (OidIsValid(schema) && get_relname_relid(table->relname, schema) == table->relid)
				continue;
			ei->replaced = true;
			names = lappend(names, ei->index->name);
			break;
		}
	}
	return names;
}

/*
 * How long an index's turn at building what it owes lasts, about: half of
 * what a transaction of the worker may, which a slice sized for it never
 * makes too long.
 */
long
engine_turn_ms(void)
{
	return Max(flusso_max_transaction_duration / 2, 1);
}

/*
 * How many root keys a seed's next chunk of ei reads, at most limit: as
 * many as build in about a share of one turn (owed.c), shares being the
 * seeds that run side by side, so that seeds, even of indexes whose
 * documents are dear, keep the others waiting no longer than a turn of
 * building what they owe would.
 */
int
engine_chunk_keys(const EngineIndex *ei, int limit, int shares)
{
	return pace_keys(&ei->pace, Max(engine_turn_ms() / Max(shares, 1), 1), limit);
}

/* The index that needs seeding and can be built, after after (or first). */
EngineIndex *
engine_next_to_seed(Engine *engine, EngineIndex *after)
{
	ListCell   *lc;
	bool		past = after == NULL;

	foreach(lc, engine->indexes)
	{
		EngineIndex *ei = lfirst(lc);

		if (past && ei->needs_seed && !ei->broken)
			return ei;
		past |= ei == after;
	}
	return NULL;
}

const char *
engine_index_name(const EngineIndex *ei)
{
	return ei->index->name;
}

const char *
engine_index_version(const EngineIndex *ei)
{
	return ei->index->version;
}

bool
engine_index_broken(const EngineIndex *ei)
{
	return ei->broken;
}

bool
engine_index_needs_seed(const EngineIndex *ei)
{
	return ei->needs_seed;
}

EngineIndex *
engine_index(Engine *engine, const char *name)
{
	ListCell   *lc;

	foreach(lc, engine->indexes)
	{
		EngineIndex *ei = lfirst(lc);

		if (strcmp(ei->index->name, name) == 0)
			return ei;
	}
	return NULL;
}

/*
 * The indexes that read relid, as root, related table or junction (a
 * List of EngineIndex, in the caller's memory context).
 */
List *
engine_readers(Engine *engine, Oid relid)
{
	List	   *readers = NIL;
	ListCell   *lc;

	foreach(lc, engine->indexes)
	{
		EngineIndex *ei = lfirst(lc);
		ListCell   *rc;

		foreach(rc, ei->reads)
		{
			if (((TableUse *) lfirst(rc))->relid == relid)
			{
				readers = lappend(readers, ei);
				break;
			}
		}
	}
	return readers;
}

/* Compile an index again and prepare its statement as its owner. */
static void
probe_index(void *arg)
{
	EngineIndex *ei = arg;

	compile_index(ei);
	bind_index_statements(ei->index, ei->query, ei->resolver, ei->apply_sql[SINK_CURRENT]);
}

/* Does an index ship to OpenSearch (so the database needs a shipper)? */
bool
engine_ships(Engine *engine)
{
	return engine->ships;
}

/*
 * flusso_retry_rejected() arrived in stream order, in the commit at
 * version: the documents its sinks rejected are queued again.
 */
void
engine_retry_rejected(EngineIndex *ei, XLogRecPtr version)
{
	sink_retry_rejected(ei->sink, version);
}

/* The index made durable progress: the worker's deaths are forgiven it. */
void
engine_progressed(EngineIndex *ei)
{
	strikes_progressed(ei->index->name);
}

/*
 * A user asked for the index again (flusso_resnapshot): if the worker kept
 * dying on it, give it another chance; engine_retry_broken() then tries it.
 */
void
engine_forgive(EngineIndex *ei)
{
	if (!ei->set_aside)
		return;
	strikes_forget(ei->index->name);
	ei->set_aside = false;
}

/* Is an index isolated, so that engine_retry_broken() has work? */
bool
engine_any_broken(Engine *engine)
{
	ListCell   *lc;

	foreach(lc, engine->indexes)
	{
		EngineIndex *ei = lfirst(lc);

		if (ei->broken && !ei->set_aside)
			return true;
	}
	return false;
}

/*
 * Does any isolated index compile and prepare again (its table or column
 * is back, its filter fixed)?  Runs in the caller's transaction.  The
 * caller restarts the engine, which seeds it: the changes it skipped are
 * lost to it.
 */
bool
engine_retry_broken(Engine *engine)
{
	ListCell   *lc;

	foreach(lc, engine->indexes)
	{
		EngineIndex *ei = lfirst(lc);
		EngineIndex probe = {0};
		char	   *failure;

		if (!ei->broken || ei->set_aside)
			continue;
		probe.index = ei->index;
		probe.sink = ei->sink;
		if (attempt(probe_index, &probe, &failure))
			return true;
	}
	return false;
}

/* Whether the index is to be seeded, as the worker sees it now. */
void
engine_needs_seed(EngineIndex *ei, bool needs_seed)
{
	ei->needs_seed = needs_seed;
	ei->mirrored = 0;
}

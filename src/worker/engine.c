/*-------------------------------------------------------------------------
 *
 * engine.c
 *	  Applies a batch of changes to the documents of every index: resolve
 *	  each change to the root keys it affects (deduplicated per index), then
 *	  one statement per index builds those documents from the current rows
 *	  and writes them to flusso_docs.<index> — upserting what built,
 *	  deleting what built nothing — as the index's owner.
 *
 * The only place where cdc/ and document/ meet.  An index that cannot be
 * compiled or built is isolated: it goes to phase error with the reason,
 * is marked for re-seeding (its changes are skipped from then on), and the
 * others go on; engine_retry_broken() tells when it builds again.
 *
 * While an index is seeded, its writes go to the seed's shadow table, and
 * the keys its changes resolve to can be captured for the seed to drop
 * from its chunk; engine_build() writes the chunk.  Rows inserted into
 * flusso.signal are handed back to the caller rather than resolved.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "common/hashfn.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "check/ready.h"
#include "check/tables.h"
#include "common/attempt.h"
#include "document/build.h"
#include "document/docid.h"
#include "document/resolve.h"
#include "document/search.h"
#include "document/session.h"
#include "index/access.h"
#include "sink/table_sink.h"
#include "worker/engine.h"
#include "worker/shared.h"
#include "worker/strikes.h"

/*
 * A document to rebuild: its id and, for composite keys, the parts.  The
 * set is keyed by the id string it points to, so that an entry costs what
 * its id takes, not a fixed buffer: a batch keeps up to KEY_SET_LIMIT.
 */
typedef struct PendingKey
{
	char	   *id;				/* the hash key: a pointer to the string */
	char	  **parts;
} PendingKey;

static uint32
pending_key_hash(const void *key, Size keysize)
{
	const char *id = *(char *const *) key;

	return hash_bytes((const unsigned char *) id, strlen(id));
}

static int
pending_key_match(const void *a, const void *b, Size keysize)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

typedef struct ApplyState
{
	EngineIndex *ei;
	MemoryContext context;		/* of keys and their parts: outlives SPI */
	HTAB	   *keys;			/* PendingKey by id */
	List	  **rule_inputs;	/* per rule: values still to walk up */
	bool		truncate_root;
	bool		rebuild_all;
	int64		written;
} ApplyState;

/*
 * Isolate an index that failed: phase error with the reason, skipped from
 * now on, and marked for re-seeding in the caller's transaction, since
 * the changes it skips are lost to it.
 */
void
engine_index_failed(EngineIndex *ei, const char *message)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(ei->index->name)};
	DatabaseEntry *entry;

	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("flusso index \"%s\" stopped: %s", ei->index->name, message),
			 errdetail("Its documents are no longer kept up to date; the others go on."),
			 errhint("Fix what flusso_check() reports; the index is then seeded again.")));
	ei->broken = true;
	ei->capture = false;
	ei->shadow = false;
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry = shared_database(MyDatabaseId, false);
	if (entry)
	{
		shared_set_phase(entry, ei->index->name, PHASE_ERROR, message);
		shared_record_error(entry, psprintf("index \"%s\": %s", ei->index->name, message));
	}
	LWLockRelease(flusso_shared->lock);

	/* a seed in progress cannot resume: the changes skipped miss its shadow */
	if (sink_table_exists(ei->index->name, true))
		sink_shadow_drop(ei->index->name);
	SPI_connect();
	if (SPI_execute_with_args("UPDATE flusso.index SET needs_seed = true WHERE name OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_UPDATE ||
		SPI_execute_with_args("DELETE FROM flusso.seed WHERE index_name OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not mark index \"%s\" for seeding", ei->index->name);
	SPI_finish();
}

/*
 * Run action(arg), a piece of work on one index, in a subtransaction.  If
 * it fails, the index is isolated with the reason (prefixed by what, when
 * given) as flusso_status() may show it to any flusso_admin member: an
 * error that may quote a row value is logged whole and shown by its
 * SQLSTATE (common/attempt.c).  While it runs, the index is in hand
 * (strikes.c): should the worker die, the index is blamed.
 */
bool
engine_attempt(EngineIndex *ei, const char *what, void (*action) (void *arg), void *arg)
{
	ErrorData  *error;
	bool		ok;
	char	   *shown;

	strikes_begin(ei->index->name, ei->index->version);
	ok = attempt_error(action, arg, &error);
	strikes_end();
	if (ok)
		return true;
	shown = attempt_message_for_status(error);
	if (strcmp(shown, error->message) != 0)
		ereport(LOG,
				(errmsg("flusso index \"%s\": %s%s%s", ei->index->name,
						what ? what : "", what ? ": " : "", error->message)));
	engine_index_failed(ei, what ? psprintf("%s: %s", what, shown) : shown);
	return false;
}

/*
 * Everything an index needs to be built, from the live catalog: what it
 * reads (checked as flusso_check() checks it), its build statement, its
 * resolution rules and its write statements.
 */
static void
compile_index(void *arg)
{
	EngineIndex *ei = arg;
	int			ids;

	ei->reads = check_index_ready(ei->index);
	ei->query = doc_build_query(ei->index->schema);
	ei->resolver = doc_compile_resolver(ei->index->schema);
	ids = ei->query->nparams + ei->query->nkeys + 1;	/* the document ids */
	for (int shadow = 0; shadow < 2; shadow++)
		ei->apply_sql[shadow] =
			sink_table_write_sql(ei->index->name, shadow, ei->query->sql,
								 doc_search_expr(ei->index->schema, "built.doc"), ids);
}

/* names, versions and owners, in order: a change of any reloads the engine */
char *
engine_signature(void)
{
	StringInfoData buf;

	initStringInfo(&buf);
	SPI_connect();
	if (SPI_execute("SELECT pg_catalog.concat_ws(':', name, version, owner::pg_catalog.oid) FROM flusso.index ORDER BY name",
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read flusso.index");
	for (uint64 i = 0; i < SPI_processed; i++)
		appendStringInfo(&buf, "%s;", SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
	SPI_finish();
	return buf.data;
}

static void
add_columns(List **specs, const ResolveRule *rule)
{
	ListCell   *lc;
	char	   *prefix = psprintf("%s.%s:", rule->nspname, rule->relname);
	int			prefix_len = strlen(prefix);

	foreach(lc, *specs)
	{
		char	   *spec = lfirst(lc);

		if (strncmp(spec, prefix, prefix_len) == 0)
		{
			ListCell   *cc;

			foreach(cc, rule->columns)
			{
				char	   *col = lfirst(cc);
				char	   *padded = psprintf(",%s,", spec + prefix_len);

				if (strstr(padded, psprintf(",%s,", col)) == NULL)
					spec = psprintf("%s,%s", spec, col);
			}
			lfirst(lc) = spec;
			return;
		}
	}
	{
		StringInfoData buf;
		ListCell   *cc;

		initStringInfo(&buf);
		appendStringInfoString(&buf, prefix);
		foreach(cc, rule->columns)
			appendStringInfo(&buf, "%s%s", cc == list_head(rule->columns) ? "" : ",",
							 (char *) lfirst(cc));
		*specs = lappend(*specs, buf.data);
	}
}

/* The names of the indexes flusso.index marks for seeding. */
static List *
indexes_to_seed(void)
{
	MemoryContext caller = CurrentMemoryContext;
	List	   *names = NIL;

	SPI_connect();
	if (SPI_execute("SELECT name FROM flusso.index WHERE needs_seed", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read flusso.index");
	MemoryContextSwitchTo(caller);
	for (uint64 i = 0; i < SPI_processed; i++)
		names = lappend(names, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
	SPI_finish();
	return names;
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
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	bool		there;

	SPI_connect();
	if (SPI_execute_with_args("SELECT 1 FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1 FOR SHARE",
							  1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read index \"%s\"", name);
	there = SPI_processed == 1;
	SPI_finish();
	return there;
}

/* Load and compile every index, in a transaction, in the current context. */
Engine *
engine_load(const char *publication)
{
	Engine	   *engine = palloc0(sizeof(Engine));
	List	   *specs = NIL;
	List	   *to_seed = indexes_to_seed();
	ListCell   *lc;

	engine->signature = engine_signature();
	engine->signal_relid = get_relname_relid("signal", get_namespace_oid(FLUSSO_SCHEMA, false));
	engine->plugin_options = list_make2(makeDefElem("publication",
													(Node *) makeString(pstrdup(publication)), -1),
										makeDefElem("columns",
													(Node *) makeString("flusso.signal:id,kind,index_name"), -1));
	foreach(lc, index_load_all())
	{
		EngineIndex *ei = palloc0(sizeof(EngineIndex));
		ListCell   *rc;

		ei->index = lfirst(lc);
		ei->needs_seed = list_has_string(to_seed, ei->index->name);
		/*
		 * A restore brings definitions, not the extension's tables; an index
		 * dropped since it was read keeps its table dropped.
		 */
		if (!sink_table_exists(ei->index->name, false) && index_still_there(ei->index->name))
			sink_table_ensure(ei->index->name, ei->index->owner);
		if (strikes_of(ei->index->name, ei->index->version) >= STRIKES_LIMIT)
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
				add_columns(&specs, lfirst(rc));
		}
		engine->indexes = lappend(engine->indexes, ei);
	}
	foreach(lc, specs)
		engine->plugin_options = lappend(engine->plugin_options,
										 makeDefElem("columns", (Node *) makeString(lfirst(lc)), -1));
	return engine;
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

static void
add_key(ApplyState *st, char **parts)
{
	char	   *id;
	PendingKey *key;
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
	if (SPI_execute_with_args(sql, 1, types, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not resolve changes: %s", sql);
	for (uint64 i = 0; i < SPI_processed; i++)
		out = lappend(out, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
	return out;
}

/* documents built and written by one statement */
#define BUILD_SLICE 20000

/*
 * One statement builds the documents of n keys (their parts, one array per
 * key column, and their ids), upserts those that built and changed, and
 * deletes those that built nothing.  Returns the documents written.
 */
static int64
write_slice(EngineIndex *ei, Datum **parts, Datum *ids, int n)
{
	DocumentQuery *q = ei->query;
	int			nkeys = q->nkeys;
	int			nargs = q->nparams + nkeys + 1;
	Datum	   *values = palloc(sizeof(Datum) * nargs);
	Oid		   *types = palloc(sizeof(Oid) * nargs);
	bool		isnull;
	int64		written;

	memcpy(values, q->param_values, sizeof(Datum) * q->nparams);
	memcpy(types, q->param_types, sizeof(Oid) * (q->nparams + nkeys));
	for (int k = 0; k < nkeys; k++)
		values[q->nparams + k] = PointerGetDatum(construct_array(parts[k], n, TEXTOID,
																 -1, false, TYPALIGN_INT));
	values[q->nparams + nkeys] = PointerGetDatum(construct_array(ids, n, TEXTOID,
																 -1, false, TYPALIGN_INT));
	types[q->nparams + nkeys] = TEXTARRAYOID;
	if (SPI_execute_with_args(ei->apply_sql[ei->shadow], nargs, types, values,
							  NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not write the documents of index \"%s\"", ei->index->name);
	written = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	for (int k = 0; k < nkeys; k++)
		pfree(DatumGetPointer(values[q->nparams + k]));
	pfree(DatumGetPointer(values[q->nparams + nkeys]));
	for (int i = 0; i < n; i++)
	{
		pfree(DatumGetPointer(ids[i]));
		for (int k = 0; k < nkeys; k++)
			pfree(DatumGetPointer(parts[k][i]));
	}
	SPI_freetuptable(SPI_tuptable);
	return written;
}

/* Resolve, build and write one index; runs in a subtransaction. */
static void
apply_index(void *arg)
{
	ApplyState *st = arg;
	EngineIndex *ei = st->ei;
	BuildSession session;
	HASH_SEQ_STATUS scan;
	PendingKey *key;
	int			nkeys = ei->resolver->nkeys;
	Datum	  **parts = palloc(sizeof(Datum *) * nkeys);
	Datum	   *ids = palloc(sizeof(Datum) * BUILD_SLICE);
	ListCell   *lc;
	int			r = 0;

	for (int k = 0; k < nkeys; k++)
		parts[k] = palloc(sizeof(Datum) * BUILD_SLICE);
	st->written = 0;
	/* before any value of the stream is used: may the owner read them? */
	check_index_readable(ei->reads, ei->index->owner);
	doc_session_begin(&session, ei->index->owner);
	SPI_connect();

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
	if (st->truncate_root &&
		SPI_execute(psprintf("DELETE FROM %s", sink_table_name(ei->index->name, ei->shadow)),
					false, 0) < 0)
		elog(ERROR, "could not empty the documents of index \"%s\"", ei->index->name);

	/* build and write the set a slice at a time: statements stay small */
	hash_seq_init(&scan, st->keys);
	for (;;)
	{
		int			n = 0;

		while (n < BUILD_SLICE && (key = hash_seq_search(&scan)) != NULL)
		{
			ids[n] = CStringGetTextDatum(key->id);
			for (int k = 0; k < nkeys; k++)
				parts[k][n] = CStringGetTextDatum(key->parts[k]);
			n++;
		}
		if (n == 0)
			break;
		st->written += write_slice(ei, parts, ids, n);
		if (n < BUILD_SLICE)
			break;
	}
	SPI_finish();
	doc_session_end(&session);
}

static List *
start_chunk(List *indexes)
{
	List	   *states = NIL;
	ListCell   *lc;

	foreach(lc, indexes)
	{
		EngineIndex *ei = lfirst(lc);
		ApplyState *st = palloc0(sizeof(ApplyState));
		HASHCTL		ctl;

		st->ei = ei;
		st->context = CurrentMemoryContext;
		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(char *);
		ctl.entrysize = sizeof(PendingKey);
		ctl.hash = pending_key_hash;
		ctl.match = pending_key_match;
		ctl.hcxt = CurrentMemoryContext;
		st->keys = hash_create("flusso pending keys", 256, &ctl,
							   HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
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
	PendingKey *key;

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

static int64
finish_chunk(List *states)
{
	ListCell   *lc;
	int64		written = 0;

	foreach(lc, states)
	{
		ApplyState *st = lfirst(lc);

		if (st->ei->broken || !has_work(st))
			continue;
		if (engine_attempt(st->ei, NULL, apply_index, st))
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
pending(List *states)
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

/* The signal a change inserted, or NULL when it is not one. */
static Signal *
read_signal(Engine *engine, const ThinChange *change)
{
	Signal	   *signal;

	if (change->relid != engine->signal_relid || change->op != THIN_INSERT ||
		change->ncolumns != 3 || change->new_values == NULL)
		return NULL;
	for (int c = 0; c < 3; c++)
	{
		if (change->new_values[c].kind != THIN_TEXT)
			return NULL;
	}
	signal = palloc(sizeof(Signal));
	signal->id = pstrdup(change->new_values[0].text);
	signal->kind = pstrdup(change->new_values[1].text);
	signal->index_name = pstrdup(change->new_values[2].text);
	return signal;
}

/* Does the index read relid (as root, related table or junction)? */
static bool
index_reads(const EngineIndex *ei, Oid relid)
{
	ListCell   *lc;

	foreach(lc, ei->reads)
	{
		if (((TableUse *) lfirst(lc))->relid == relid)
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

	foreach(lc, engine->indexes)
	{
		EngineIndex *ei = lfirst(lc);
		Signal	   *signal;
		ListCell   *sc;

		if (!index_reads(ei, change->relid))
			continue;
		foreach(sc, signals)
		{
			signal = lfirst(sc);
			if (strcmp(signal->kind, kind) == 0 && strcmp(signal->index_name, ei->index->name) == 0)
				break;
		}
		if (sc != NULL)
			continue;
		signal = palloc0(sizeof(Signal));
		signal->kind = pstrdup(kind);
		signal->index_name = pstrdup(ei->index->name);
		signal->table = psprintf("%s.%s", change->nspname, change->relname);
		signals = lappend(signals, signal);
	}
	return signals;
}

/*
 * Apply a batch to every index; the caller's transaction commits it.
 * Changes are resolved into a deduplicated set of keys per index, which is
 * built and written once it holds KEY_SET_LIMIT keys (or the batch ends), so
 * that a document changed many times in a batch is built once, and a batch
 * of any size is applied in bounded memory.  Rows inserted into
 * flusso.signal are appended to *signals, in the caller's memory context.
 * Returns the documents written or deleted.
 */
int64
engine_apply(Engine *engine, ChangeBatch *batch, List **signals)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext chunk_context = AllocSetContextCreate(CurrentMemoryContext,
														"flusso apply chunk",
														ALLOCSET_DEFAULT_SIZES);
	int64		written = 0;
	bool		more = true;

	batch_begin_scan(batch);
	while (more)
	{
		MemoryContext old = MemoryContextSwitchTo(chunk_context);
		List	   *states = start_chunk(engine->indexes);
		ThinChange	change;
		int			n = 0;
		ListCell   *lc;

		while ((more = batch_next(batch, &change)))
		{
			if (change.relid == engine->signal_relid ||
				change.op == THIN_REWRITE || change.op == THIN_UNCOVERED)
			{
				MemoryContextSwitchTo(caller);
				if (change.relid == engine->signal_relid)
				{
					Signal	   *signal = read_signal(engine, &change);

					if (signal)
						*signals = lappend(*signals, signal);
				}
				else
					*signals = coverage_signals(engine, &change, *signals);
				MemoryContextSwitchTo(chunk_context);
				continue;
			}
			foreach(lc, states)
			{
				ApplyState *st = lfirst(lc);

				if (!st->ei->broken)
					collect(st, &change);
			}
			/* counting is not free: look every thousand changes */
			if (++n % 1000 == 0 && pending(states) >= KEY_SET_LIMIT)
				break;
		}
		written += finish_chunk(states);
		MemoryContextSwitchTo(old);
		MemoryContextReset(chunk_context);
	}
	MemoryContextDelete(chunk_context);
	return written;
}

/*
 * Build and write the documents of keys (char ** rows of key parts) for
 * one index, to wherever it writes now.  False when the index failed, and
 * was isolated.
 */
bool
engine_build(EngineIndex *ei, List *keys, int64 *written)
{
	MemoryContext context = AllocSetContextCreate(CurrentMemoryContext, "flusso build",
												  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(context);
	List	   *states = start_chunk(list_make1(ei));
	ListCell   *lc;

	foreach(lc, keys)
		add_key(linitial(states), lfirst(lc));
	*written = finish_chunk(states);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(context);
	return !ei->broken;
}

/* Compile an index again and prepare its statement as its owner. */
static void
probe_index(void *arg)
{
	EngineIndex *ei = arg;

	compile_index(ei);
	check_index_statements(ei->index, ei->query, ei->resolver, ei->apply_sql[0]);
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
		if (attempt(probe_index, &probe, &failure))
			return true;
	}
	return false;
}

/*-------------------------------------------------------------------------
 *
 * seed.c
 *	  Seeds an index without a long transaction and without pausing the
 *	  stream, by the DBLog watermark algorithm.
 *
 * The slot exists before a seed begins, and a seed begins only once the
 * current catalog shows every table of the index published.  It records
 * the largest root key and creates an empty shadow table, which from then
 * on receives the index's live changes too.  Then, chunk after chunk:
 *
 *	1. commit a low watermark row into flusso.signal;
 *	2. in a new transaction, read the next flusso.snapshot_chunk_size root
 *	   keys after the cursor, up to the largest key, by keyset pagination
 *	   on the primary key (composite keys compared as row values);
 *	3. commit a high watermark row;
 *	4. the stream delivers the low watermark, then changes, then the high
 *	   one.  Documents the changes in between resolve to are built by the
 *	   stream from current rows, so they are dropped from the chunk; at the
 *	   high watermark the rest of the chunk is built and written, and the
 *	   cursor is saved in the same transaction.
 *
 * Documents are built from current rows, so a drop only saves work: the
 * drops are keyed by document (this index, this root key), compared in SQL
 * with the key types' own equality.  After the last chunk the shadow gets
 * its secondary indexes and replaces the documents table.  A restart
 * resumes at the saved cursor; watermarks of an earlier run are ignored,
 * since only the pair this run wrote counts, and deleted.  The slot is
 * confirmed only past batches whose transaction committed, so never past
 * the saved cursor's chunk.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "common/attempt.h"
#include "check/publication.h"
#include "document/session.h"
#include "flusso.h"
#include "sink/table_sink.h"
#include "snapshot/seed.h"
#include "worker/shared.h"
#include "worker/worker.h"

/*
 * A transaction of the seed's own, with SPI; the caller's memory context
 * is current again once it has committed.  Its start is reported, so that
 * pg_stat_activity.xact_start shows how long it has been open.
 */
static MemoryContext
begin_transaction(void)
{
	MemoryContext caller = CurrentMemoryContext;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	worker_lock_extension();
	PushActiveSnapshot(GetTransactionSnapshot());
	SPI_connect();
	return caller;
}

static void
end_transaction(MemoryContext caller)
{
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	MemoryContextSwitchTo(caller);
}

/* Run a statement about index name with the name as $1 (and more text). */
static void
execute(const char *sql, int expected, const char *name, const char *arg2)
{
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(name),
	arg2 ? CStringGetTextDatum(arg2) : (Datum) 0};

	if (SPI_execute_with_args(sql, arg2 ? 2 : 1, argtypes, values, NULL, false, 0) != expected)
		elog(ERROR, "could not run \"%s\"", sql);
}

static void forget(Seed **seed);

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

/* The phase of the seeded index, with the seed's progress. */
static void
report(Seed *seed, IndexPhase phase, const char *message)
{
	DatabaseEntry *entry;

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry = shared_database(MyDatabaseId, false);
	if (entry)
	{
		IndexStatus *status = shared_index_status(entry, seed->ei->index->name);

		shared_set_phase(entry, seed->ei->index->name, phase, message);
		if (status)
		{
			status->snapshot_done = seed->done;
			status->snapshot_total = Max(seed->total, seed->done);
		}
	}
	LWLockRelease(flusso_shared->lock);
}

static Datum
text_array(char **values, int n)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		elems[i] = CStringGetTextDatum(values[i]);
	return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/* A text[] column of the current SPI row, as n strings, or NULL. */
static char **
text_array_column(int column, int n)
{
	bool		isnull;
	Datum		value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, column, &isnull);
	Datum	   *elems;
	int			nelems;
	char	  **out;

	if (isnull)
		return NULL;
	deconstruct_array(DatumGetArrayTypeP(value), TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, NULL, &nelems);
	if (nelems != n)
		return NULL;
	out = palloc(sizeof(char *) * n);
	for (int i = 0; i < n; i++)
		out[i] = TextDatumGetCString(elems[i]);
	return out;
}

/* The key values of an SPI result row as strings; keys are never null. */
static char **
row_strings(uint64 row, int n)
{
	char	  **out = palloc(sizeof(char *) * n);

	for (int i = 0; i < n; i++)
	{
		out[i] = SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, i + 1);
		if (out[i] == NULL)
			elog(ERROR, "a root key read by the seed is null");
	}
	return out;
}

/*
 * "r.k1, r.k2" of the root key, quoted, with a suffix such as " DESC".
 * Qualified, so that ORDER BY sorts the columns, not the text output
 * columns of the same names.
 */
static char *
key_list(const DocumentQuery *q, const char *suffix)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < q->nkeys; i++)
		appendStringInfo(&buf, "%sr.%s%s", i ? ", " : "", quote_identifier(q->key_columns[i]),
						 suffix);
	return buf.data;
}

/*
 * "r.k1 IS NOT NULL AND r.k2 IS NOT NULL": a row whose key is null has no
 * document (flusso_check() reports a key that can be null), and its null
 * would sort first in DESC order.
 */
static char *
keys_not_null(const DocumentQuery *q)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < q->nkeys; i++)
		appendStringInfo(&buf, "%sr.%s IS NOT NULL", i ? " AND " : "",
						 quote_identifier(q->key_columns[i]));
	return buf.data;
}

/* "ROW($first::t1, $first+1::t2)": key values bound as text, cast */
static char *
key_params(const Seed *seed, int first)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "ROW(");
	for (int i = 0; i < seed->nkeys; i++)
		appendStringInfo(&buf, "%s$%d::%s", i ? ", " : "", first + i, seed->key_types[i]);
	appendStringInfoChar(&buf, ')');
	return buf.data;
}

/*
 * Every table of the index in the publication, by the current catalog?
 * NULL if so, or the first one missing, in words.
 */
static char *
missing_publication(EngineIndex *ei, const char *publication)
{
	Datum	   *relids = palloc(sizeof(Datum) * Max(list_length(ei->resolver->rules), 1));
	Oid			argtypes[2] = {OIDARRAYOID, TEXTOID};
	Datum		values[2];
	int			n = 0;
	ListCell   *lc;

	foreach(lc, ei->resolver->rules)
		relids[n++] = ObjectIdGetDatum(((ResolveRule *) lfirst(lc))->relid);
	values[0] = PointerGetDatum(construct_array(relids, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
	values[1] = CStringGetTextDatum(publication);
	if (SPI_execute_with_args("SELECT r.relid::pg_catalog.regclass::pg_catalog.text "
							  "FROM pg_catalog.unnest($1) r(relid) WHERE NOT EXISTS ("
							  "SELECT 1 FROM " PUBLICATION_TABLES_FROM
							  "WHERE t.pubname OPERATOR(pg_catalog.=) $2 AND c.oid OPERATOR(pg_catalog.=) r.relid) ORDER BY 1",
							  2, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read publication \"%s\"", publication);
	if (SPI_processed == 0)
		return NULL;
	return psprintf("waiting to seed: publication \"%s\" does not publish table %s",
					publication, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));
}

/* Resume the saved seed of this version, if any and its shadow is there. */
static bool
resume(Seed *seed)
{
	EngineIndex *ei = seed->ei;
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(ei->index->name),
	CStringGetTextDatum(ei->index->version)};
	bool		isnull;
	MemoryContext old;

	/* only a shadow that received every change since the worker started */
	if (!ei->shadow)
		return false;
	if (SPI_execute_with_args("SELECT last_key, max_key, done, total FROM flusso.seed "
							  "WHERE index_name OPERATOR(pg_catalog.=) $1 AND version OPERATOR(pg_catalog.=) $2",
							  2, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read flusso.seed");
	if (SPI_processed == 0 || !sink_table_exists(ei->index->name, true))
		return false;
	old = MemoryContextSwitchTo(seed->context);
	seed->last_key = text_array_column(1, seed->nkeys);
	seed->max_key = text_array_column(2, seed->nkeys);
	MemoryContextSwitchTo(old);
	seed->done = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
	seed->total = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4, &isnull));
	return true;
}

/*
 * Start afresh: the largest root key and an estimate of the rows, read as
 * the index's owner, an empty shadow table, and the seed's row.
 */
static void
start(void *arg)
{
	Seed	   *seed = arg;
	EngineIndex *ei = seed->ei;
	DocumentQuery *q = ei->query;
	BuildSession session;
	Oid			argtypes[5] = {TEXTOID, TEXTOID, TEXTARRAYOID, INT8OID, OIDOID};
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	MemoryContext old;

	doc_session_begin(&session, ei->index->owner);
	if (SPI_execute(psprintf("SELECT %s FROM %s r WHERE %s ORDER BY %s LIMIT 1",
							 key_list(q, "::pg_catalog.text"), q->root_qualified,
							 keys_not_null(q), key_list(q, " DESC")), true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the largest key of %s", q->root_qualified);
	old = MemoryContextSwitchTo(seed->context);
	seed->max_key = SPI_processed ? row_strings(0, seed->nkeys) : NULL;
	MemoryContextSwitchTo(old);
	values[4] = ObjectIdGetDatum(q->root_relid);
	if (SPI_execute_with_args("SELECT CASE WHEN reltuples OPERATOR(pg_catalog.>=) 0 THEN reltuples::pg_catalog.int8 END "
							  "FROM pg_catalog.pg_class WHERE oid OPERATOR(pg_catalog.=) $1",
							  1, &argtypes[4], &values[4], NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the size of %s", q->root_qualified);
	if (SPI_processed == 1 && SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1))
		seed->total = pg_strtoint64(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));
	else if (seed->max_key)
	{
		/* never analyzed: count, once */
		if (SPI_execute(psprintf("SELECT pg_catalog.count(*) FROM %s", q->root_qualified),
						true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not count the rows of %s", q->root_qualified);
		seed->total = pg_strtoint64(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));
	}
	doc_session_end(&session);

	sink_shadow_create(ei->index->name, ei->index->owner);
	values[0] = CStringGetTextDatum(ei->index->name);
	values[1] = CStringGetTextDatum(ei->index->version);
	values[2] = seed->max_key ? text_array(seed->max_key, seed->nkeys) : (Datum) 0;
	nulls[2] = seed->max_key ? ' ' : 'n';
	values[3] = Int64GetDatum(seed->total);
	if (SPI_execute_with_args("INSERT INTO flusso.seed (index_name, version, max_key, total) "
							  "VALUES ($1, $2, $3, $4) ON CONFLICT (index_name) DO UPDATE SET "
							  "version = $2, last_key = NULL, max_key = $3, done = 0, total = $4, "
							  "started_at = pg_catalog.clock_timestamp(), "
							  "updated_at = pg_catalog.clock_timestamp()",
							  4, argtypes, values, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the seed of index \"%s\"", ei->index->name);
}

/*
 * Indexes with a seed to resume write to their shadow from the start: the
 * stream replays what the shadow may have missed, and a seed of another
 * index may run first.  In the caller's transaction.
 */
void
seed_mark_resumable(Engine *engine)
{
	MemoryContext caller = CurrentMemoryContext;
	List	   *names = NIL;
	ListCell   *lc;

	SPI_connect();
	if (SPI_execute("SELECT s.index_name FROM flusso.seed s JOIN flusso.index i "
					"ON i.name OPERATOR(pg_catalog.=) s.index_name AND i.version OPERATOR(pg_catalog.=) s.version", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read flusso.seed");
	MemoryContextSwitchTo(caller);
	for (uint64 i = 0; i < SPI_processed; i++)
		names = lappend(names, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
	SPI_finish();
	foreach(lc, names)
	{
		EngineIndex *ei = engine_index(engine, lfirst(lc));

		if (ei && ei->needs_seed && !ei->broken && sink_table_exists(ei->index->name, true))
			ei->shadow = true;
	}
}

/* The first index that needs seeding and can be built, or NULL. */
EngineIndex *
seed_candidate(Engine *engine)
{
	ListCell   *lc;

	foreach(lc, engine->indexes)
	{
		EngineIndex *ei = lfirst(lc);

		if (ei->needs_seed && !ei->broken)
			return ei;
	}
	return NULL;
}

/*
 * Begin (or resume) seeding ei, in transactions of its own.  NULL when it
 * must wait for the publication to cover its tables, or failed to start
 * (and was isolated).
 */
static Seed *
begin_one(EngineIndex *ei, const char *publication)
{
	Seed	   *seed;
	char	   *waiting;
	bool		failed = false;
	MemoryContext context;
	MemoryContext old;

	context = AllocSetContextCreate(CurrentMemoryContext, "flusso seed", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(context);
	seed = palloc0(sizeof(Seed));
	seed->ei = ei;
	seed->context = context;
	seed->chunk_context = AllocSetContextCreate(context, "flusso seed chunk",
												ALLOCSET_DEFAULT_SIZES);
	seed->nkeys = ei->query->nkeys;
	seed->state = SEED_CHUNK_DUE;

	(void) begin_transaction();
	seed->key_types = MemoryContextAlloc(context, sizeof(char *) * seed->nkeys);
	for (int k = 0; k < seed->nkeys; k++)
		seed->key_types[k] = MemoryContextStrdup(context,
												 doc_type_name(ei->query->key_types[k]));
	/* held until the shadow exists, so that a drop of the index drops it too */
	execute("SELECT 1 FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1 AND version OPERATOR(pg_catalog.=) $2 FOR SHARE",
			SPI_OK_SELECT, ei->index->name, ei->index->version);
	if (SPI_processed == 0)
		waiting = "waiting to seed: the index was dropped or replaced, the worker restarts";
	else
		waiting = missing_publication(ei, publication);
	if (waiting)
		waiting = MemoryContextStrdup(context, waiting);
	else if (!resume(seed) && !engine_attempt(ei, "could not start seeding", start, seed))
		failed = true;
	end_transaction(context);
	MemoryContextSwitchTo(old);

	if (waiting || failed)
	{
		/* a table left out of the publication: its changes are not seen */
		if (waiting)
			report(seed, PHASE_ERROR, waiting);
		MemoryContextDelete(context);
		return NULL;
	}
	ei->shadow = true;
	report(seed, PHASE_SNAPSHOT, NULL);
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

/*
 * Begin (or resume) seeding the first index that needs it and can start:
 * one that waits for the publication does not hold up the others.  NULL
 * when none can.
 */
Seed *
seed_begin(Engine *engine, const char *publication)
{
	ListCell   *lc;

	foreach(lc, engine->indexes)
	{
		EngineIndex *ei = lfirst(lc);
		Seed	   *seed;

		if (!ei->needs_seed || ei->broken)
			continue;
		seed = begin_one(ei, publication);
		if (seed)
			return seed;
	}
	return NULL;
}

static void
insert_watermark(Seed *seed, const char *kind, char *id)
{
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(kind),
	CStringGetTextDatum(seed->ei->index->name)};
	MemoryContext caller = begin_transaction();

	if (SPI_execute_with_args("INSERT INTO flusso.signal (kind, index_name) VALUES ($1, $2) "
							  "RETURNING id::pg_catalog.text",
							  2, argtypes, values, NULL, false, 1) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not insert a %s watermark", kind);
	strlcpy(id, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1), UUID_TEXT_LEN);
	end_transaction(caller);
}

/* A chunk's statement and its arguments. */
typedef struct ChunkRead
{
	Seed	   *seed;
	char	   *sql;
	int			nargs;
	Oid		   *argtypes;
	Datum	   *values;
} ChunkRead;

/* Read the chunk's keys as the index's owner. */
static void
read_chunk(void *arg)
{
	ChunkRead  *read = arg;
	Seed	   *seed = read->seed;
	BuildSession session;
	MemoryContext old;

	doc_session_begin(&session, seed->ei->index->owner);
	if (SPI_execute_with_args(read->sql, read->nargs, read->argtypes, read->values,
							  NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read a chunk of %s", seed->ei->query->root_qualified);
	old = MemoryContextSwitchTo(seed->chunk_context);
	for (uint64 row = 0; row < SPI_processed; row++)
		seed->chunk = lappend(seed->chunk, row_strings(row, seed->nkeys));
	MemoryContextSwitchTo(old);
	seed->final_chunk = SPI_processed < (uint64) flusso_snapshot_chunk_size;
	doc_session_end(&session);
}

/*
 * The next chunk: low watermark, keys, high watermark, each committed in
 * a transaction of its own.  The keys are built when the high watermark
 * arrives in the stream.  If they cannot be read, the index is isolated
 * and the seed forgotten (*seed is NULL then).
 */
void
seed_read_chunk(Seed **seedp)
{
	Seed	   *seed = *seedp;
	EngineIndex *ei = seed->ei;
	DocumentQuery *q = ei->query;
	int			nkeys = seed->nkeys;
	StringInfoData sql;
	Oid		   *argtypes;
	Datum	   *values;
	int			nargs = 0;
	MemoryContext caller;
	ChunkRead	read;
	bool		ok;

	Assert(seed->state == SEED_CHUNK_DUE);
	MemoryContextReset(seed->chunk_context);
	seed->chunk = NIL;
	caller = MemoryContextSwitchTo(seed->chunk_context);
	argtypes = palloc(sizeof(Oid) * (2 * nkeys + 1));
	values = palloc(sizeof(Datum) * (2 * nkeys + 1));
	insert_watermark(seed, SIGNAL_LOW, seed->low);

	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT %s FROM %s r WHERE %s", key_list(q, "::pg_catalog.text"),
					 q->root_qualified, keys_not_null(q));
	for (int i = 0; seed->last_key && i < nkeys; i++)
	{
		argtypes[nargs] = TEXTOID;
		values[nargs++] = CStringGetTextDatum(seed->last_key[i]);
	}
	if (seed->last_key)
		appendStringInfo(&sql, " AND ROW(%s) OPERATOR(pg_catalog.>) %s", key_list(q, ""), key_params(seed, 1));
	for (int i = 0; seed->max_key && i < nkeys; i++)
	{
		argtypes[nargs] = TEXTOID;
		values[nargs++] = CStringGetTextDatum(seed->max_key[i]);
	}
	if (seed->max_key)
		appendStringInfo(&sql, " AND ROW(%s) OPERATOR(pg_catalog.<=) %s", key_list(q, ""),
						 key_params(seed, nargs - nkeys + 1));
	else
		appendStringInfoString(&sql, " AND false");
	argtypes[nargs] = INT4OID;
	values[nargs++] = Int32GetDatum(flusso_snapshot_chunk_size);
	appendStringInfo(&sql, " ORDER BY %s LIMIT $%d", key_list(q, ""), nargs);

	read = (ChunkRead) {seed, sql.data, nargs, argtypes, values};
	(void) begin_transaction();
	ok = engine_attempt(ei, "could not read a chunk to seed", read_chunk, &read);
	end_transaction(seed->chunk_context);
	if (!ok)
	{
		MemoryContextSwitchTo(caller);
		forget(seedp);
		return;
	}

	insert_watermark(seed, SIGNAL_HIGH, seed->high);
	seed->state = SEED_AWAIT_LOW;
	MemoryContextSwitchTo(caller);
}

/*
 * The chunk's keys less those the stream built in the window, compared as
 * values of the key types (EXCEPT uses their own equality).
 */
typedef struct ChunkKeys
{
	Seed	   *seed;
	List	   *keys;			/* out: char ** rows of key parts */
} ChunkKeys;

static void
keys_to_build(void *arg)
{
	ChunkKeys  *out = arg;
	Seed	   *seed = out->seed;
	EngineIndex *ei = seed->ei;
	int			nkeys = seed->nkeys;
	List	   *sets[2] = {seed->chunk, ei->captured};
	Oid		   *argtypes = palloc(sizeof(Oid) * 2 * nkeys);
	Datum	   *values = palloc(sizeof(Datum) * 2 * nkeys);
	StringInfoData select[2];
	StringInfoData sql;
	List	   *keys = NIL;
	BuildSession session;
	MemoryContext old;

	if (ei->captured == NIL)
	{
		out->keys = seed->chunk;
		return;
	}
	for (int s = 0; s < 2; s++)
	{
		initStringInfo(&select[s]);
		appendStringInfoString(&select[s], "SELECT ");
		for (int k = 0; k < nkeys; k++)
		{
			char	  **column = palloc(sizeof(char *) * Max(list_length(sets[s]), 1));
			int			n = 0;
			ListCell   *lc;

			foreach(lc, sets[s])
				column[n++] = ((char **) lfirst(lc))[k];
			argtypes[s * nkeys + k] = TEXTARRAYOID;
			values[s * nkeys + k] = text_array(column, n);
			appendStringInfo(&select[s], "%sk%d::%s", k ? ", " : "", k + 1,
							 seed->key_types[k]);
		}
		appendStringInfo(&select[s], " FROM ROWS FROM (");
		for (int k = 0; k < nkeys; k++)
			appendStringInfo(&select[s], "%spg_catalog.unnest($%d)", k ? ", " : "",
							 s * nkeys + k + 1);
		appendStringInfoString(&select[s], ") AS r(");
		for (int k = 0; k < nkeys; k++)
			appendStringInfo(&select[s], "%sk%d", k ? ", " : "", k + 1);
		appendStringInfoChar(&select[s], ')');
	}
	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT ");
	for (int k = 0; k < nkeys; k++)
		appendStringInfo(&sql, "%sk%d::pg_catalog.text", k ? ", " : "", k + 1);
	appendStringInfo(&sql, " FROM (%s EXCEPT %s) AS d(", select[0].data, select[1].data);
	for (int k = 0; k < nkeys; k++)
		appendStringInfo(&sql, "%sk%d", k ? ", " : "", k + 1);
	appendStringInfoChar(&sql, ')');

	/* as the owner, under the pinned settings: the casts run the types' code */
	doc_session_begin(&session, ei->index->owner);
	SPI_connect();
	if (SPI_execute_with_args(sql.data, 2 * nkeys, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not subtract the keys changed during a chunk");
	old = MemoryContextSwitchTo(seed->chunk_context);
	for (uint64 row = 0; row < SPI_processed; row++)
		keys = lappend(keys, row_strings(row, nkeys));
	MemoryContextSwitchTo(old);
	SPI_finish();
	doc_session_end(&session);
	out->keys = keys;
}

static void
forget(Seed **seed)
{
	(*seed)->ei->shadow = false;
	(*seed)->ei->capture = false;
	(*seed)->ei->captured = NIL;
	MemoryContextDelete((*seed)->context);
	*seed = NULL;
}

static void
swap(void *name)
{
	sink_shadow_swap((const char *) name);
}

/*
 * Every chunk is written: build the shadow's secondary indexes and swap it
 * in, in a transaction of its own between two batches (the one step of a
 * seed that lasts as long as a CREATE INDEX over all its documents), and
 * say the index is live.
 */
void
seed_finish(Seed **seed)
{
	EngineIndex *ei = (*seed)->ei;
	const char *name = ei->index->name;
	MemoryContext caller;
	bool		current;

	Assert((*seed)->state == SEED_FINISH_DUE);
	caller = begin_transaction();
	/* a definition replaced meanwhile: its own seed follows the restart */
	execute("SELECT 1 FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1 AND version OPERATOR(pg_catalog.=) $2 FOR UPDATE",
			SPI_OK_SELECT, name, ei->index->version);
	current = SPI_processed == 1;
	/* a view on the documents table, say: this index stops, not all */
	if (current && !engine_attempt(ei, "could not swap in the seeded documents",
								   swap, (void *) name))
		current = false;
	if (current)
	{
		execute("UPDATE flusso.index SET needs_seed = false WHERE name OPERATOR(pg_catalog.=) $1",
				SPI_OK_UPDATE, name, NULL);
		/* requests that this seed answered: they arrived before it started */
		execute("DELETE FROM flusso.signal WHERE kind OPERATOR(pg_catalog.=) '" SIGNAL_RESNAPSHOT "' AND index_name OPERATOR(pg_catalog.=) $1 "
				"AND created_at OPERATOR(pg_catalog.<=) (SELECT started_at FROM flusso.seed WHERE index_name OPERATOR(pg_catalog.=) $1)",
				SPI_OK_DELETE, name, NULL);
		execute("DELETE FROM flusso.seed WHERE index_name OPERATOR(pg_catalog.=) $1", SPI_OK_DELETE, name, NULL);
	}
	end_transaction(caller);
	if (current)
	{
		engine_progressed(ei);
		ei->needs_seed = false;
		report(*seed, PHASE_LIVE, NULL);
		ereport(LOG,
				(errmsg("flusso: index \"%s\" seeded: " INT64_FORMAT " root rows read",
						name, (*seed)->done)));
	}
	forget(seed);
}

/*
 * The high watermark arrived: build and write what the stream did not,
 * save the cursor with it, and finish after the last chunk.
 */
static void
close_chunk(Seed **seed)
{
	Seed	   *s = *seed;
	EngineIndex *ei = s->ei;
	ChunkKeys	chunk = {s, NIL};
	int64		written;

	ei->capture = false;
	if (!engine_attempt(ei, "could not seed a chunk", keys_to_build, &chunk))
	{
		forget(seed);
		return;
	}
	ei->captured = NIL;
	if (!engine_build(ei, chunk.keys, &written))
	{
		/* isolated and marked for seeding by the engine */
		forget(seed);
		return;
	}
	s->done += list_length(s->chunk);
	if (s->chunk != NIL)
	{
		char	  **last = llast(s->chunk);
		MemoryContext old = MemoryContextSwitchTo(s->context);

		for (int k = 0; s->last_key && k < s->nkeys; k++)
			pfree(s->last_key[k]);
		if (s->last_key)
			pfree(s->last_key);
		s->last_key = palloc(sizeof(char *) * s->nkeys);
		for (int k = 0; k < s->nkeys; k++)
			s->last_key[k] = pstrdup(last[k]);
		MemoryContextSwitchTo(old);
	}
	{
		Oid			argtypes[3] = {TEXTOID, TEXTARRAYOID, INT8OID};
		Datum		values[3];
		char		nulls[3] = {' ', ' ', ' '};

		values[0] = CStringGetTextDatum(ei->index->name);
		values[1] = s->last_key ? text_array(s->last_key, s->nkeys) : (Datum) 0;
		nulls[1] = s->last_key ? ' ' : 'n';
		values[2] = Int64GetDatum(s->done);
		SPI_connect();
		if (SPI_execute_with_args("UPDATE flusso.seed SET last_key = $2, done = $3, "
								  "updated_at = pg_catalog.clock_timestamp() WHERE index_name OPERATOR(pg_catalog.=) $1",
								  3, argtypes, values, nulls, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not save the seed cursor of index \"%s\"", ei->index->name);
		SPI_finish();
	}
	if (s->final_chunk)
	{
		/* the estimate is exact now */
		s->total = s->done;
		s->state = SEED_FINISH_DUE;
	}
	else
		s->state = SEED_CHUNK_DUE;
	report(s, PHASE_SNAPSHOT, NULL);
}

/*
 * Say why an index will be seeded again: asked for, a table it reads was
 * rewritten, or changed while the publication did not cover it.  In the
 * last case the index is in phase error until the seed can begin, which
 * is once the publication covers every table it reads again.
 */
static void
seed_announce(EngineIndex *ei, const Signal *signal)
{
	const char *name = ei->index->name;

	if (strcmp(signal->kind, SIGNAL_RESNAPSHOT) == 0)
	{
		/* the worker may have kept dying on it: the user asks again */
		engine_forgive(ei);
		ereport(LOG, (errmsg("flusso: re-snapshot of index \"%s\" requested", name)));
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
		set_phase(name, PHASE_ERROR, message);
	}
}

/*
 * Act on the signals a batch ended with, in the batch's transaction, after
 * its changes were applied.  A re-snapshot request, a rewrite of a table
 * an index reads, or a change the publication did not cover marks the
 * index for seeding and abandons a seed of it in progress, which starts
 * again; a request itself is deleted when that seed completes.  True when
 * a table was rewritten: the caller compiles the indexes again.
 */
bool
seed_handle_signals(Engine *engine, Seed **seed, List *signals)
{
	ListCell   *lc;
	bool		reload = false;

	foreach(lc, signals)
	{
		Signal	   *signal = lfirst(lc);
		Seed	   *s = *seed;

		if (strcmp(signal->kind, SIGNAL_RESNAPSHOT) == 0 ||
			strcmp(signal->kind, SIGNAL_REWRITE) == 0 ||
			strcmp(signal->kind, SIGNAL_UNCOVERED) == 0)
		{
			EngineIndex *ei = engine_index(engine, signal->index_name);

			if (ei == NULL)
			{
				/* its index was dropped since */
				if (signal->id)
				{
					SPI_connect();
					execute("DELETE FROM flusso.signal WHERE id::pg_catalog.text OPERATOR(pg_catalog.=) $1",
							SPI_OK_DELETE, signal->id, NULL);
					SPI_finish();
				}
				continue;
			}
			SPI_connect();
			execute("UPDATE flusso.index SET needs_seed = true WHERE name OPERATOR(pg_catalog.=) $1",
					SPI_OK_UPDATE, signal->index_name, NULL);
			execute("DELETE FROM flusso.seed WHERE index_name OPERATOR(pg_catalog.=) $1",
					SPI_OK_DELETE, signal->index_name, NULL);
			SPI_finish();
			if (s && s->ei == ei)
				forget(seed);
			ei->needs_seed = true;
			seed_announce(ei, signal);
			/* its columns may read differently now: compile it again */
			reload |= strcmp(signal->kind, SIGNAL_REWRITE) == 0;
		}
		else if (s && s->state == SEED_AWAIT_LOW && strcmp(signal->id, s->low) == 0)
		{
			/* the window opens: what changes now, the stream builds */
			s->state = SEED_AWAIT_HIGH;
			s->ei->captured = NIL;
			s->ei->capture_context = s->chunk_context;
			s->ei->capture = true;
		}
		else if (s && s->state == SEED_AWAIT_HIGH && strcmp(signal->id, s->high) == 0)
		{
			SPI_connect();
			execute("DELETE FROM flusso.signal WHERE id::pg_catalog.text OPERATOR(pg_catalog.=) ANY (ARRAY[$1, $2])",
					SPI_OK_DELETE, s->low, s->high);
			SPI_finish();
			close_chunk(seed);
		}
		else
		{
			/* a watermark of an earlier run, or of a seed abandoned */
			SPI_connect();
			execute("DELETE FROM flusso.signal WHERE id::pg_catalog.text OPERATOR(pg_catalog.=) $1 "
					"AND kind OPERATOR(pg_catalog.=) ANY (ARRAY['" SIGNAL_LOW "', '" SIGNAL_HIGH "'])", SPI_OK_DELETE, signal->id, NULL);
			SPI_finish();
		}
	}
	return reload;
}

/* Watermarks of an earlier run count for nothing: delete them. */
void
seed_forget_watermarks(void)
{
	MemoryContext caller = begin_transaction();

	if (SPI_execute("DELETE FROM flusso.signal WHERE kind OPERATOR(pg_catalog.=) ANY (ARRAY['" SIGNAL_LOW "', '" SIGNAL_HIGH "'])",
					false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete old watermarks");
	end_transaction(caller);
}

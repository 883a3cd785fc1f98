/*-------------------------------------------------------------------------
 *
 * catalog_outbox.c
 *	  flusso.outbox, the documents queued for OpenSearch, one row per index
 *	  and document id with the version it ships with: every statement over
 *	  the table, each written once, as a verb.
 *
 * The worker queues (sink/opensearch_sink.c says what the rows mean); the
 * shipper takes the oldest and forgets what it shipped, both planned with
 * the outbox's indexes alone (store_index_paths_begin()).  Each verb runs in
 * the caller's role and transaction, in a SPI connection of its own;
 * what it returns is allocated in the caller's memory context.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "store/catalog_outbox.h"
#include "store/index_paths.h"
#include "util/spi_run.h"

/*
 * Queue ids (text[], distinct) of index with version; a row queued again
 * keeps the higher version.  The number of rows queued.
 */
uint64
outbox_queue(const char *index, Datum ids, XLogRecPtr version, bool seed_only)
{
	Oid			types[4] = {TEXTOID, TEXTARRAYOID, INT8OID, BOOLOID};
	Datum		values[4];

	values[0] = CStringGetTextDatum(index);
	values[1] = ids;
	values[2] = Int64GetDatum((int64) version);
	values[3] = BoolGetDatum(seed_only);
	return spi_run("INSERT INTO flusso.outbox AS o (index_name, id, version, seed_only) "
			   "SELECT $1, u.id, $3, $4 FROM pg_catalog.unnest($2) u(id) "
			   "ON CONFLICT (index_name, id) DO UPDATE SET "
			   "version = GREATEST(o.version, EXCLUDED.version), "
			   "seed_only = o.seed_only AND EXCLUDED.seed_only, seq = EXCLUDED.seq",
			   4, types, values, SPI_OK_INSERT);
}

/* Queue the rejected documents of index again, at version. */
void
outbox_requeue_rejected(const char *index, XLogRecPtr version)
{
	Oid			types[2] = {TEXTOID, INT8OID};
	Datum		values[2] = {CStringGetTextDatum(index), Int64GetDatum((int64) version)};

	(void) spi_run("INSERT INTO flusso.outbox AS o (index_name, id, version, seed_only) "
			   "SELECT index_name, id, $2, false FROM flusso.rejected "
			   "WHERE index_name OPERATOR(pg_catalog.=) $1 "
			   "ON CONFLICT (index_name, id) DO UPDATE SET "
			   "version = GREATEST(o.version, EXCLUDED.version), seed_only = false, seq = EXCLUDED.seq",
			   2, types, values, SPI_OK_INSERT);
}

/* Forget what is queued for index. */
void
outbox_forget(const char *index)
{
	(void) spi_run_text("DELETE FROM flusso.outbox WHERE index_name OPERATOR(pg_catalog.=) $1",
						  index, NULL, SPI_OK_DELETE);
}

/* Forget what is queued for every index (a copy starts over). */
void
outbox_forget_every(void)
{
	(void) spi_run("DELETE FROM flusso.outbox", 0, NULL, NULL, SPI_OK_DELETE);
}

/* The rows taken, into context, room for limit made first. */
typedef struct Taken
{
	OutboxRow  *rows;
	int			n;
	MemoryContext context;
} Taken;

static void
read_row(HeapTuple tuple, TupleDesc desc, void *arg)
{
	Taken	   *taken = arg;
	OutboxRow  *row = &taken->rows[taken->n++];
	MemoryContext old = MemoryContextSwitchTo(taken->context);
	bool		isnull;

	row->id = SPI_getvalue(tuple, desc, 1);
	row->version = DatumGetInt64(SPI_getbinval(tuple, desc, 2, &isnull));
	row->seed_only = DatumGetBool(SPI_getbinval(tuple, desc, 3, &isnull));
	row->seq = DatumGetInt64(SPI_getbinval(tuple, desc, 4, &isnull));
	MemoryContextSwitchTo(old);
}

/*
 * The oldest rows queued for index in version order, at most limit, or
 * those after *after; into context.  The number of rows.
 */
int
outbox_take(const char *index, int limit, const OutboxRow *after,
			MemoryContext context, OutboxRow **rows)
{
	Oid			types[4] = {TEXTOID, INT4OID, INT8OID, INT8OID};
	Datum		values[4];
	Taken		taken = {NULL, 0, context};
	int			level;

	values[0] = CStringGetTextDatum(index);
	values[1] = Int32GetDatum(limit);
	values[2] = Int64GetDatum(after ? after->version : 0);
	values[3] = Int64GetDatum(after ? after->seq : 0);
	taken.rows = MemoryContextAllocZero(context, sizeof(OutboxRow) * Max(limit, 1));
	level = store_index_paths_begin();
	(void) spi_read(after == NULL
					  ? "SELECT id, version, seed_only, seq FROM flusso.outbox "
					  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
					  "ORDER BY version, seq LIMIT $2"
					  : "SELECT id, version, seed_only, seq FROM flusso.outbox "
					  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
					  "AND (version, seq) OPERATOR(pg_catalog.>) ($3, $4) "
					  "ORDER BY version, seq LIMIT $2",
					  after == NULL ? 2 : 4, types, values, true, limit, read_row, &taken);
	store_index_paths_end(level);
	*rows = taken.rows;
	return taken.n;
}

/*
 * Forget the rows shipped: ids (text[]) with the seqs (int8[]) they had
 * when taken, unless queued again since, or locked (the worker queues
 * them again).  The number of rows forgotten.
 */
uint64
outbox_forget_shipped(const char *index, Datum ids, Datum seqs)
{
	Oid			types[3] = {TEXTOID, TEXTARRAYOID, INT8ARRAYOID};
	Datum		values[3] = {CStringGetTextDatum(index), ids, seqs};
	uint64		forgotten;
	int			level = store_index_paths_begin();

	/* the rows locked are deleted where they are, by their ctids */
	forgotten = spi_run("DELETE FROM flusso.outbox WHERE ctid OPERATOR(pg_catalog.=) ANY (ARRAY("
						  "SELECT o.ctid FROM flusso.outbox o, "
						  "ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3)) AS d(id, seq) "
						  "WHERE o.index_name OPERATOR(pg_catalog.=) $1 "
						  "AND o.id OPERATOR(pg_catalog.=) d.id AND o.seq OPERATOR(pg_catalog.=) d.seq "
						  "FOR UPDATE OF o SKIP LOCKED))",
						  3, types, values, SPI_OK_DELETE);
	store_index_paths_end(level);
	return forgotten;
}

/*
 * Is a row of index that the served generation takes (not a seed's only)
 * still queued, first queued at or before at?  A row queued again keeps
 * when it was first queued (queued_at), so one that was waiting at that
 * time still counts, whatever came of it since, until it is shipped.
 */
bool
outbox_holds_queued_by(const char *index, TimestampTz at)
{
	Oid			types[2] = {TEXTOID, TIMESTAMPTZOID};
	Datum		values[2] = {CStringGetTextDatum(index), TimestampTzGetDatum(at)};

	return spi_read("SELECT 1 FROM flusso.outbox "
					  "WHERE index_name OPERATOR(pg_catalog.=) $1 AND NOT seed_only "
					  "AND queued_at OPERATOR(pg_catalog.<=) $2 LIMIT 1",
					  2, types, values, true, 1, NULL, NULL) > 0;
}

/* The ids queued for index (read-only), in the caller's memory context. */
List *
outbox_ids(const char *index)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(index)};

	return spi_read_texts("SELECT id FROM flusso.outbox WHERE index_name OPERATOR(pg_catalog.=) $1",
							1, types, values);
}

/*-------------------------------------------------------------------------
 *
 * opensearch_sink.c
 *	  The OpenSearch sink, as the worker sees it: no HTTP, only rows in
 *	  flusso's catalog, written in the caller's transaction.  The shipper
 *	  (src/shipper/) does the rest.
 *
 * Documents to ship are queued in flusso.outbox, one row per index and
 * document id, with the version they ship with: the commit LSN the
 * document is built after (the batch's last commit, or a seed chunk's low
 * watermark).  A row queued again keeps the higher version; the shipper
 * builds the document from the current rows when it ships it, so the
 * version never carries older content than it says.  Rows a seed's chunk
 * queued (seed_only) are shipped to the generations being seeded only.
 *
 * Generations are rows of flusso.opensearch_generation: a seed begins one
 * (seeding), its end marks it seeded; the shipper creates the OpenSearch
 * index, ships, and once every document queued before the seed ended is
 * shipped, moves the alias to it (served) and retires the one before.
 * Dropping the index retires them all, and the shipper deletes them (or,
 * kept, forgets them).
 *
 * Every statement runs as the catalog's owner: the index's owner may not
 * read or write flusso's tables.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "util/pinned.h"
#include "ipc/requests.h"
#include "opensearch/server.h"
#include "sink/opensearch_sink.h"

/* Run a statement as the catalog's owner; returns SPI_processed. */
static uint64
run(const char *sql, int nargs, Oid *types, Datum *values, int expected)
{
	CatalogUser saved;
	uint64		processed;

	SPI_connect();
	catalog_become_owner(&saved);
	if (SPI_execute_with_args(sql, nargs, types, values, NULL, false, 0) != expected)
		elog(ERROR, "could not run \"%s\"", sql);
	processed = SPI_processed;
	catalog_restore_user(&saved);
	SPI_finish();
	return processed;
}

/* A statement about the sink's index, its name as $1. */
static uint64
run_for_index(const IndexSink *sink, const char *sql, int expected)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(sink->index)};

	return run(sql, 1, types, values, expected);
}

/* The current generation needs nothing created: a seed makes it. */
static bool
opensearch_sink_exists(const IndexSink *sink)
{
	return true;
}

static void
opensearch_sink_create(const IndexSink *sink)
{
}

/* No generation serves or is on its way: only a seed makes one. */
static bool
opensearch_sink_needs_seed(const IndexSink *sink)
{
	return run_for_index(sink,
						 "SELECT 1 FROM flusso.opensearch_generation "
						 "WHERE index_name OPERATOR(pg_catalog.=) $1 "
						 "AND state OPERATOR(pg_catalog.<>) 'retired'",
						 SPI_OK_SELECT) == 0;
}

/*
 * Forget what is queued and rejected; retire every generation for the
 * shipper to delete, or, kept, forget them and leave them in OpenSearch.
 */
static void
opensearch_sink_drop(const IndexSink *sink, bool keep)
{
	run_for_index(sink, "DELETE FROM flusso.outbox WHERE index_name OPERATOR(pg_catalog.=) $1",
				  SPI_OK_DELETE);
	run_for_index(sink, "DELETE FROM flusso.rejected WHERE index_name OPERATOR(pg_catalog.=) $1",
				  SPI_OK_DELETE);
	if (keep)
		run_for_index(sink, "DELETE FROM flusso.opensearch_generation "
					  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
					  "AND state OPERATOR(pg_catalog.<>) 'retired'", SPI_OK_DELETE);
	else
		run_for_index(sink, "UPDATE flusso.opensearch_generation SET state = 'retired', "
					  "updated_at = pg_catalog.now() WHERE index_name OPERATOR(pg_catalog.=) $1",
					  SPI_OK_UPDATE);
	request_shipper_at_commit();
}

/*
 * Queue ids (text[], distinct) with version; a seed's chunk queues for the
 * generations being seeded only.
 */
static int64
opensearch_sink_queue(const IndexSink *sink, SinkTarget target, Datum ids, XLogRecPtr version)
{
	Oid			types[4] = {TEXTOID, TEXTARRAYOID, INT8OID, BOOLOID};
	Datum		values[4];

	values[0] = CStringGetTextDatum(sink->index);
	values[1] = ids;
	values[2] = Int64GetDatum((int64) version);
	values[3] = BoolGetDatum(target == SINK_NEXT);
	return (int64) run("INSERT INTO flusso.outbox AS o (index_name, id, version, seed_only) "
					   "SELECT $1, u.id, $3, $4 FROM pg_catalog.unnest($2) u(id) "
					   "ON CONFLICT (index_name, id) DO UPDATE SET "
					   "version = GREATEST(o.version, EXCLUDED.version), "
					   "seed_only = o.seed_only AND EXCLUDED.seed_only, seq = EXCLUDED.seq",
					   4, types, values, SPI_OK_INSERT);
}

/*
 * The root table was truncated: what is queued is moot, and the shipper
 * empties every generation before it ships what is queued from now on.
 */
static void
opensearch_sink_truncate(const IndexSink *sink, SinkTarget target, XLogRecPtr version)
{
	Oid			types[2] = {TEXTOID, INT8OID};
	Datum		values[2] = {CStringGetTextDatum(sink->index), Int64GetDatum((int64) version)};

	run_for_index(sink, "DELETE FROM flusso.outbox WHERE index_name OPERATOR(pg_catalog.=) $1",
				  SPI_OK_DELETE);
	run("UPDATE flusso.opensearch_generation SET truncate_version = $2, "
		"updated_at = pg_catalog.now() WHERE index_name OPERATOR(pg_catalog.=) $1 "
		"AND state OPERATOR(pg_catalog.<>) 'retired'",
		2, types, values, SPI_OK_UPDATE);
	request_shipper_at_commit();
}

/* Retire the generations being seeded, and what only they needed. */
static void
retire_seeding(const IndexSink *sink)
{
	if (run_for_index(sink, "UPDATE flusso.opensearch_generation SET state = 'retired', "
					  "updated_at = pg_catalog.now() WHERE index_name OPERATOR(pg_catalog.=) $1 "
					  "AND state OPERATOR(pg_catalog.=) 'seeding'", SPI_OK_UPDATE) > 0)
		request_shipper_at_commit();
}

/*
 * A new generation to seed, replacing one left behind: an OpenSearch index
 * named <prefix><index>-g<generation>-<random> (a name no index's alias
 * can take: index names have no '-'; the random part keeps a database
 * restored elsewhere, whose generations count from 1 again, off the
 * indexes of the original), which the shipper creates with the sink's
 * options as they are now.
 */
static void
opensearch_sink_next_begin(const IndexSink *sink)
{
	OpenSearchServer *server = os_server_load(sink->server, sink->owner, false);
	Oid			types[5] = {TEXTOID, TEXTOID, OIDOID, TEXTOID, JSONBOID};
	Datum		values[5];

	retire_seeding(sink);
	values[0] = CStringGetTextDatum(sink->index);
	values[1] = CStringGetTextDatum(sink->server);
	values[2] = ObjectIdGetDatum(sink->owner);
	values[3] = CStringGetTextDatum(psprintf("%s%s", server->index_prefix, sink->index));
	values[4] = DirectFunctionCall1(jsonb_in, CStringGetDatum(sink->options));
	run("INSERT INTO flusso.opensearch_generation "
		"(generation, index_name, server_name, owner, alias, concrete, settings, state) "
		"SELECT g, $1, $2, $3::pg_catalog.regrole, $4, "
		"pg_catalog.concat($4, '-g', g, '-', pg_catalog.left(pg_catalog.gen_random_uuid()::pg_catalog.text, 8)), "
		"$5, 'seeding' "
		"FROM pg_catalog.nextval('flusso.generation_seq') g",
		5, types, values, SPI_OK_INSERT);
	request_shipper_at_commit();
}

static bool
opensearch_sink_next_exists(const IndexSink *sink)
{
	return run_for_index(sink,
						 "SELECT 1 FROM flusso.opensearch_generation "
						 "WHERE index_name OPERATOR(pg_catalog.=) $1 "
						 "AND state OPERATOR(pg_catalog.=) 'seeding'",
						 SPI_OK_SELECT) > 0;
}

static void
opensearch_sink_next_discard(const IndexSink *sink)
{
	retire_seeding(sink);
}

/*
 * The seed is complete in PostgreSQL: the generation is seeded.  Every
 * document queued up to now (up to the WAL's insert position) must be
 * shipped before the shipper serves it.
 */
static void
opensearch_sink_next_swap(const IndexSink *sink)
{
	run_for_index(sink, "UPDATE flusso.opensearch_generation SET state = 'seeded', "
				  "seeded_version = pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_insert_lsn(), "
				  "'0/0')::pg_catalog.int8, updated_at = pg_catalog.now() "
				  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
				  "AND state OPERATOR(pg_catalog.=) 'seeding'", SPI_OK_UPDATE);
	request_shipper_at_commit();
}

/*
 * flusso_retry_rejected() arrived in stream order: queue the rejected
 * documents again, built from the current rows when they ship, and let a
 * stopped index ship again.
 */
static void
opensearch_sink_retry_rejected(const IndexSink *sink, XLogRecPtr version)
{
	Oid			types[2] = {TEXTOID, INT8OID};
	Datum		values[2] = {CStringGetTextDatum(sink->index), Int64GetDatum((int64) version)};

	run("INSERT INTO flusso.outbox AS o (index_name, id, version, seed_only) "
		"SELECT index_name, id, $2, false FROM flusso.rejected "
		"WHERE index_name OPERATOR(pg_catalog.=) $1 "
		"ON CONFLICT (index_name, id) DO UPDATE SET "
		"version = GREATEST(o.version, EXCLUDED.version), seed_only = false, seq = EXCLUDED.seq",
		2, types, values, SPI_OK_INSERT);
	run_for_index(sink, "DELETE FROM flusso.rejected WHERE index_name OPERATOR(pg_catalog.=) $1",
				  SPI_OK_DELETE);
	run_for_index(sink, "UPDATE flusso.sink SET stopped = NULL "
				  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
				  "AND sink OPERATOR(pg_catalog.=) 'opensearch'", SPI_OK_UPDATE);
	request_shipper_at_commit();
}

const SinkOps opensearch_sink_ops = {
	.name = "opensearch",
	.exists = opensearch_sink_exists,
	.create = opensearch_sink_create,
	.needs_seed = opensearch_sink_needs_seed,
	.drop = opensearch_sink_drop,
	.queue = opensearch_sink_queue,
	.truncate = opensearch_sink_truncate,
	.next_begin = opensearch_sink_next_begin,
	.next_exists = opensearch_sink_next_exists,
	.next_discard = opensearch_sink_next_discard,
	.next_swap = opensearch_sink_next_swap,
	.retry_rejected = opensearch_sink_retry_rejected,
};

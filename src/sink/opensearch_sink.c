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
 * queued (seed_only) are shipped to the generations being seeded only:
 * that is the seed of a generation begun before 0.6.0, as the others are
 * seeded by ranges (below).
 *
 * With the table sink on, OpenSearch mirrors it once nothing is being
 * seeded: the index has the table sink and is not to be seeded, one
 * generation serves and none is being seeded or waits to serve
 * (generation_mirroring_table()).  The shipper then ships what the table
 * sink holds (its current generation; a document it lacks, as a delete)
 * instead of building it again, and the worker queues only the documents
 * whose table-sink write changed something.  That is safe because the
 * table sink is written in the very transaction that queues: a queued row
 * ships what the table sink held at least as late as the row's version,
 * so OpenSearch never holds what the table sink did not, and a document
 * the table sink did not change is one OpenSearch already holds, or has
 * queued.  While the two are not in lockstep — a generation being seeded
 * or waiting to serve (its seed_only rows built from the rows), the table
 * sink seeded again into its next generation, the table sink off or just
 * added, or a seed owed — the shipper builds as before and the worker
 * queues every document it writes; and since the documents built until
 * then may be ones the table sink never held, the worker goes on queueing
 * every document for changes committed before it first saw OpenSearch
 * mirror the table sink again (engine/owed.c).
 *
 * Generations are rows of flusso.opensearch_generation: a seed begins one
 * (seeding), its end marks it seeded; the shipper creates the OpenSearch
 * index, ships, and once every document queued before the seed ended is
 * shipped, moves the alias to it (served) and retires the one before.
 * The seed's own documents are not queued: the shipper reads the root
 * keys in key order and ships their documents a range at a time, built
 * from the current rows, at the version the generation began with (below
 * that of every change queued for it since, so a change always wins), and
 * a generation serves once every range is shipped as well.
 * Dropping the index retires them all, and the shipper deletes them (or,
 * kept, forgets them).
 *
 * Every statement (store/'s verbs) runs as the catalog's owner: the
 * index's owner may not read or write flusso's tables.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"

#include "util/pinned.h"
#include "ipc/requests.h"
#include "opensearch/server.h"
#include "sink/opensearch_sink.h"
#include "store/catalog_opensearch_generation.h"
#include "store/catalog_outbox.h"
#include "store/catalog_rejected.h"
#include "store/catalog_sink.h"

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
	CatalogUser saved;
	bool		active;

	catalog_become_owner(&saved);
	active = generation_any_active(sink->index);
	catalog_restore_user(&saved);
	return !active;
}

/*
 * Forget what is queued and rejected; retire every generation for the
 * shipper to delete, or, kept, forget them and leave them in OpenSearch.
 */
static void
opensearch_sink_drop(const IndexSink *sink, bool keep)
{
	CatalogUser saved;

	catalog_become_owner(&saved);
	outbox_forget(sink->index);
	catalog_forget_rejected(sink->index);
	if (keep)
		generation_forget_active(sink->index);
	else
		generation_retire_all(sink->index);
	catalog_restore_user(&saved);
	request_shipper_at_commit();
}

/*
 * Queue ids (text[], distinct) with version; a seed's chunk queues for the
 * generations being seeded only, and nothing while the generation being
 * seeded is seeded by ranges: the shipper reads its keys itself
 * (shipper/ship_range.c).  The shipper is woken once the caller's
 * transaction has committed, not polled for: before the commit it would
 * find nothing, and after it, nothing else tells it.
 */
static int64
opensearch_sink_queue(const IndexSink *sink, SinkTarget target, Datum ids, XLogRecPtr version)
{
	CatalogUser saved;
	uint64		queued = 0;

	catalog_become_owner(&saved);
	if (target != SINK_NEXT || !generation_seeding_by_ranges(sink->index))
		queued = outbox_queue(sink->index, ids, version, target == SINK_NEXT);
	catalog_restore_user(&saved);
	if (queued > 0)
		request_shipping_at_commit();
	return (int64) queued;
}

/*
 * The root table was truncated: what is queued is moot, and the shipper
 * empties every generation before it ships what is queued from now on.
 */
static void
opensearch_sink_truncate(const IndexSink *sink, SinkTarget target, XLogRecPtr version)
{
	CatalogUser saved;

	catalog_become_owner(&saved);
	outbox_forget(sink->index);
	generation_truncate(sink->index, version);
	catalog_restore_user(&saved);
	request_shipper_at_commit();
}

/* Retire the generations being seeded, and what only they needed. */
static void
retire_seeding(const IndexSink *sink)
{
	CatalogUser saved;
	uint64		retired;

	catalog_become_owner(&saved);
	retired = generation_retire_seeding(sink->index);
	catalog_restore_user(&saved);
	if (retired > 0)
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
	CatalogUser saved;

	retire_seeding(sink);
	catalog_become_owner(&saved);
	generation_begin(sink->index, sink->server, sink->owner,
					 psprintf("%s%s", server->index_prefix, sink->index), sink->options);
	catalog_restore_user(&saved);
	request_shipper_at_commit();
}

static bool
opensearch_sink_next_exists(const IndexSink *sink)
{
	CatalogUser saved;
	bool		seeding;

	catalog_become_owner(&saved);
	seeding = generation_any_seeding(sink->index);
	catalog_restore_user(&saved);
	return seeding;
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
	CatalogUser saved;

	catalog_become_owner(&saved);
	generation_seeded(sink->index);
	catalog_restore_user(&saved);
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
	CatalogUser saved;

	catalog_become_owner(&saved);
	outbox_requeue_rejected(sink->index, version);
	catalog_forget_rejected(sink->index);
	catalog_resume_shipping(sink->index);
	catalog_restore_user(&saved);
	request_shipper_at_commit();
}

/*
 * The sink's OpenSearch options changed where OpenSearch applies them to a
 * live index (replicas, refresh_interval; on_error is the shipper's): its
 * generations take them in place, with no seed, and the shipper puts them
 * on the served one.  In the caller's transaction, as the catalog's owner.
 */
void
opensearch_sink_set_options(const IndexSink *sink)
{
	CatalogUser saved;

	catalog_become_owner(&saved);
	generation_set_options(sink->index, sink->options);
	catalog_restore_user(&saved);
	request_shipper_at_commit();
}

/*
 * Does OpenSearch mirror the table sink now?  The generation it serves,
 * or 0.  Read as the catalog's owner.
 */
int64
opensearch_sink_mirrored(const IndexSink *sink)
{
	CatalogUser saved;
	int64		served;

	catalog_become_owner(&saved);
	served = generation_mirroring_table(sink->index);
	catalog_restore_user(&saved);
	return served;
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

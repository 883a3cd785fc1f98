/*-------------------------------------------------------------------------
 *
 * ship.c
 *	  One _bulk request of an index: the oldest queued documents not yet
 *	  in flight, built from the current rows as the index's owner, composed
 *	  for every generation that takes them (or the next keys of a seed
 *	  range, ship_range.c); and, once it ended, what became of each
 *	  recorded.  How many are in flight at once, and in what order they
 *	  go, is ship_flight.c's.
 *
 * Rows are read in version order, after the last row the turn sent, at
 * most as many as the cap allows (the server's bulk_max_documents items,
 * halved by a 413, doubled back by every bulk that goes through), as
 * build in about a turn (SHIP_TURN_MS, from what the index's documents
 * cost lately: util/pace.c, so that an index whose documents are dear
 * never keeps the others' bulks waiting behind one long build; a build
 * that outlasts flusso.build_timeout is canceled, and the bulks made
 * smaller), and as fit in bulk_max_bytes (a document larger than that
 * goes alone).  A row
 * whose id is in a bulk still in flight ends the read before it: it goes
 * in a later bulk, once that one ended.  A document that builds goes as
 * an index item, one that builds nothing as a delete, each with the row's
 * version.  The request is sent outside any transaction, so a slow
 * cluster holds no snapshot.  A 413 is a failure like any other (the
 * index backs off), unless the bulk held one document larger than
 * bulk_max_bytes: that one is rejected as too large, for good.
 *
 * A row leaves the outbox only if it was not queued again meanwhile (its
 * seq is unchanged) and the worker is not queueing it again right now (it
 * holds no lock on it: the shipper never waits for the worker, see
 * forget_rows() below), once every item of it is done; an item refused for good
 * puts the row in flusso.rejected instead, and with on_error 'stop' stops
 * the index's shipping.  A row with an item to try again stays, and the
 * index backs off.
 *
 * While OpenSearch mirrors the table sink (sink/opensearch_sink.c), the
 * documents are read as the table sink stores them: a document is built
 * once, by the worker, and OpenSearch never holds what the table sink did
 * not.  Whether OpenSearch mirrors it is read twice: before, so that an
 * index without the table sink, or being seeded, reads nothing it would
 * not use; and after the documents are read, in the same transaction, with
 * the documents table locked since the read (store/stored_docs.c): a
 * table emptied by flusso_set_sinks(), or replaced by a seed's end, before
 * the lock was taken is then seen to be so, and one emptied or replaced
 * after it waits for this transaction to end (while a transaction that
 * does so holds the table, the documents are built).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "settings.h"
#include "util/attempt.h"
#include "util/xact.h"
#include "document/by_id.h"
#include "document/session.h"
#include "store/catalog_opensearch_generation.h"
#include "store/catalog_outbox.h"
#include "store/catalog_rejected.h"
#include "store/catalog_sink.h"
#include "store/stored_docs.h"
#include "opensearch/bulk.h"
#include "opensearch/http.h"
#include "opensearch/nodes.h"
#include "shipper/ship.h"
#include "shipper/ship_digest.h"
#include "shipper/ship_range.h"


/* the index whose documents are being built, while they are */
static const char *building = NULL;

/*
 * The index whose documents the shipper is building now, or NULL: for its
 * exit callback, when it exits to end a build that would not end when
 * canceled (util/attempt.c).
 */
const char *
ship_index_building(void)
{
	return building;
}

/*
 * The oldest queued rows of the index in version order after the turn's
 * cursor (the rows of the bulks in flight stay in the outbox until they
 * end, and are not read twice), up to the first whose id is in flight.
 */
static void
read_rows(BulkBatch *b)
{
	OutboxRow	after;
	OutboxRow  *rows;
	MemoryContext old;
	int			n;

	after.version = b->after->version;
	after.seq = b->after->seq;
	n = outbox_take(b->x->name, b->limit, b->after->set ? &after : NULL, b->context, &rows);
	old = MemoryContextSwitchTo(b->context);
	b->rows = palloc0(sizeof(QueuedRow) * Max(n, 1));
	for (b->nrows = 0; b->nrows < n; b->nrows++)
	{
		QueuedRow  *r = &b->rows[b->nrows];

		r->id = rows[b->nrows].id;
		r->id_hash = hash_bytes((const unsigned char *) r->id, strlen(r->id));
		if (ship_id_busy(b->busy, r->id_hash))
		{
			b->blocked = b->nrows == 0;
			break;
		}
		r->version = rows[b->nrows].version;
		r->seed_only = rows[b->nrows].seed_only;
		r->seq = rows[b->nrows].seq;
		r->first_item = -1;
	}
	MemoryContextSwitchTo(old);
}

/*
 * The documents of ids[0..n-1] as the table sink holds them (NULL: it
 * holds none, a delete), in the caller's memory context; NULL when
 * OpenSearch does not mirror the table sink, and the caller builds them.
 */
static char **
stored_docs(const ShipIndex *x, char **ids, int n)
{
	char	  **docs;
	BuildSession session;
	bool		read;

	if (generation_mirroring_table(x->name) == 0)
		return NULL;
	docs = palloc0(sizeof(char *) * Max(n, 1));
	doc_session_begin(&session, x->owner);
	read = stored_docs_read(x->name, ids, n, docs);
	doc_session_end(&session);
	if (!read || generation_mirroring_table(x->name) == 0)
		return NULL;
	return docs;
}

/*
 * Build the documents of the rows as the index's owner, under the same
 * conditions the worker builds them, with the build statement kept with
 * what the pass read (ship_catalog.c).
 */
static void
build_rows(void *arg)
{
	BulkBatch  *b = arg;
	const DocumentQuery *query = ship_build_query(b->x);
	char	  **ids = palloc(sizeof(char *) * b->nrows);
	char	  **docs;
	MemoryContext old;

	for (int i = 0; i < b->nrows; i++)
		ids[i] = b->rows[i].id;
	old = MemoryContextSwitchTo(b->context);
	/*
	 * while OpenSearch mirrors the table sink, what it stores (stored_docs());
	 * never while a generation is seeded, as it is for a range's bulk
	 */
	docs = b->range != NULL ? NULL : stored_docs(b->x, ids, b->nrows);
	if (docs == NULL)
		docs = doc_build_ids(query, b->x->owner, ids, b->nrows);
	MemoryContextSwitchTo(old);
	for (int i = 0; i < b->nrows; i++)
		b->rows[i].doc = docs[i];
}

/*
 * The NDJSON of as many rows as fit; a row too large goes alone.  A row
 * whose document every generation that takes it holds already
 * (ship_digest.c), or that none takes, sends nothing: it is done with
 * the bulk.
 */
static void
compose(BulkBatch *b, int max_bytes)
{
	StringInfo	body = &b->body;
	int			nitems = 0;
	StringInfoData row;

	initStringInfo(&row);
	for (int i = 0; i < b->nrows; i++)
	{
		QueuedRow  *r = &b->rows[i];
		ListCell   *lc;
		int			first = nitems;

		/* a seed range's key whose row builds nothing: nothing to seed */
		if (b->range != NULL && r->doc == NULL)
		{
			b->consumed = i + 1;
			continue;
		}
		resetStringInfo(&row);
		r->largest_item = 0;
		foreach(lc, b->targets)
		{
			ShipGeneration *g = lfirst(lc);
			int			t = foreach_current_index(lc);
			int			before = row.len;

			if (!ship_generation_takes(g, r) || ship_digest_held(r, t))
				continue;
			if (r->doc)
				bulk_add_index(&row, g->row.concrete, r->id, r->version, r->doc);
			else
				bulk_add_delete(&row, g->row.concrete, r->id, r->version);
			b->deletes[nitems] = r->doc == NULL;
			b->item_targets[nitems++] = t;
			r->largest_item = Max(r->largest_item, row.len - before);
		}
		if (nitems == first)
		{
			r->unchanged = true;
			b->consumed = i + 1;
			continue;
		}
		if (body->len > 0 && body->len + row.len > max_bytes)
			break;
		appendBinaryStringInfo(body, row.data, row.len);
		r->first_item = first;
		r->nitems = nitems - first;
		b->nitems = nitems;
		b->consumed = i + 1;
	}
	pfree(row.data);
}


static void
judge(BulkBatch *b, BulkItemResult *results, Outcome *out)
{
	for (int i = 0; i < b->nrows; i++)
	{
		QueuedRow  *r = &b->rows[i];
		BulkItemResult *worst = NULL;

		if (r->unchanged)
		{
			out->done = lappend(out->done, r);
			continue;
		}
		if (r->first_item < 0)
			continue;
		ship_digest_note_results(b, r, results);
		/*
		 * BULK_DONE < BULK_RETRY < BULK_REJECTED < BULK_FOREIGN: the row
		 * fares as its worst item, a foreign version as a rejection
		 */
		for (int k = r->first_item; k < r->first_item + r->nitems; k++)
		{
			if (worst == NULL || results[k].outcome > worst->outcome)
				worst = &results[k];
		}
		if (worst == NULL || worst->outcome == BULK_DONE)
			out->done = lappend(out->done, r);
		else if (worst->outcome >= BULK_REJECTED)
		{
			out->rejected = lappend(out->rejected, r);
			out->rejections = lappend(out->rejections, worst);
		}
		else
		{
			if (out->retry++ == 0)
				out->retry_type = worst->error_type;
		}
	}
}

/*
 * The generations that take documents, read after the rows: a row queued
 * by a seed is committed after its generation, so this statement's
 * snapshot sees the generation of every row read, and no row goes
 * unshipped (or is forgotten) for want of a generation this pass did not
 * know yet.  False (the bulk waits for the next pass) when one is not in
 * the pass's list or not created in OpenSearch yet, or when none takes
 * documents: the one generation refused the fields its index gained
 * (generations.c: remap), and the rows wait for the one replacing it.
 */
static bool
read_targets(BulkBatch *b)
{
	int			n;
	int64	   *generations = generation_targets(b->x->name, &n);
	MemoryContext old;

	old = MemoryContextSwitchTo(b->context);
	for (int i = 0; i < n; i++)
	{
		int64		generation = generations[i];
		ShipGeneration *found = NULL;
		ListCell   *lc;

		foreach(lc, b->x->generations)
		{
			ShipGeneration *g = lfirst(lc);

			if (g->row.generation == generation)
				found = g;
		}
		if (found == NULL || !found->row.created || !ship_generation_active(found))
		{
			/* the next pass reads the catalog again */
			b->status->reread = true;
			MemoryContextSwitchTo(old);
			return false;
		}
		/* it refused the fields its index gained: it is being replaced */
		if (found->row.remap)
			continue;
		b->targets = lappend(b->targets, found);
	}
	MemoryContextSwitchTo(old);
	return b->targets != NIL;
}

/*
 * Read and build, in a transaction; false when there is nothing to send,
 * or (with *failure) when the documents could not be built.
 */
static bool
prepare(BulkBatch *b, char **failure)
{
	MemoryContext caller = CurrentMemoryContext;
	ErrorData  *error = NULL;
	bool		built;

	if (!xact_begin(true, NULL, 0))
		return false;
	/* the catalog changed since the pass read it: the next pass reads it */
	if (!ship_catalog_holds())
	{
		b->status->reread = true;
		b->stale = true;
		xact_commit();
		return false;
	}
	SPI_connect();
	/* rows first: a statement's snapshot sees every generation before it */
	if (b->range != NULL)
		range_read(b);
	else
		read_rows(b);
	if (b->range != NULL ? b->nrows > 0 && !range_targets(b) : !read_targets(b))
	{
		SPI_finish();
		xact_commit();
		return false;
	}
	SPI_finish();
	building = b->x->name;
	built = b->nrows == 0 ||
		attempt_error_within(build_rows, b, flusso_build_timeout, &error, &b->timed_out);
	building = NULL;
	/* what the generations hold already is not sent again */
	if (built)
		ship_digest_compare(b);
	/* the error is in the transaction's memory: read it before the commit */
	if (!built)
	{
		/* an error that may quote a row value is shown by its SQLSTATE only */
		char	   *shown = attempt_message_for_status(error);

		if (strcmp(shown, error->message) != 0)
			ereport(LOG,
					(errmsg("flusso shipper: index \"%s\": could not build documents to ship: %s",
							b->x->name, error->message)));
		*failure = MemoryContextStrdup(caller, b->timed_out
									   ? psprintf("building %d documents to ship took longer than flusso.build_timeout (%d ms): they go in smaller bulks",
												  b->nrows, flusso_build_timeout)
									   : psprintf("could not build documents to ship: %s", shown));
	}
	xact_commit();
	return built && b->nrows > 0;
}

/* The rows' ids (ids) or seqs, as an array for the outbox's statement. */
static Datum
rows_array(List *rows, bool ids)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(list_length(rows), 1));
	int			n = 0;
	ListCell   *lc;

	foreach(lc, rows)
	{
		QueuedRow  *r = lfirst(lc);

		elems[n++] = ids ? CStringGetTextDatum(r->id) : Int64GetDatum(r->seq);
	}
	return ids ? PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT))
		: PointerGetDatum(construct_array(elems, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * Forget the rows not queued again since they were read; returns how many
 * were forgotten.
 *
 * The worker queues documents again in transactions of its own that lock
 * outbox rows in an order of its own (a slice's ids in no particular
 * order, several slices a transaction), so the shipper must not wait for
 * a row the worker holds while it holds rows the worker may want next:
 * that is how the two deadlocked.  It locks the rows it deletes with SKIP
 * LOCKED, never waiting.  A row it skips is being queued again (its seq
 * changes, and it was not to be deleted) or dropped; if the worker's
 * transaction aborts instead, the row stays and is shipped again, which is
 * harmless.  The worker may wait for the shipper, which waits for nobody
 * while it holds outbox rows: no cycle.
 */
static uint64
forget_rows(const char *index, List *rows)
{
	uint64		forgotten;

	if (rows == NIL)
		return 0;
	forgotten = outbox_forget_shipped(index, rows_array(rows, true), rows_array(rows, false));
	return forgotten;
}

/*
 * Stop the shipping of an index, as on_error 'stop' asks, for n rejected
 * documents of error type error_type.
 */
static void
stop_index(BulkBatch *b, int n, const char *error_type)
{
	const char *index = b->x->name;

	b->status->reread = true;
	catalog_stop_shipping(index,
						  psprintf("OpenSearch rejected %d documents (%s); shipping stopped, as on_error 'stop' asks: see flusso_rejected('%s'), then call flusso_retry_rejected('%s')",
								   n, error_type, index, index));
}

/*
 * Record how the rows fared, in a transaction of its own.  The index is
 * stopped first: that row may be locked by the worker (a retry of the
 * rejected documents), and the shipper waits for it holding no outbox
 * row.  A rejected row is recorded only if it is forgotten: one queued
 * again meanwhile is shipped again, built from the newer rows.
 */
static void
record_outcome(BulkBatch *b, Outcome *out)
{
	const char *index = b->x->name;
	ListCell   *lc,
			   *rc;

	if (!xact_begin(true, NULL, 0))
		return;
	SPI_connect();
	if (out->rejected != NIL && strcmp(b->x->on_error, "stop") == 0)
	{
		BulkItemResult *first = linitial(out->rejections);

		stop_index(b, list_length(out->rejected),
				   first->error_type ? first->error_type : "unknown");
	}
	/* what OpenSearch stored, before the rows leave the outbox */
	ship_digest_record(b);
	if (b->range != NULL)
		range_record(b, out);
	else
	{
		forget_rows(index, out->done);
		forboth(lc, out->rejected, rc, out->rejections)
		{
			if (forget_rows(index, list_make1(lfirst(lc))) > 0)
				ship_record_rejected(index, lfirst(lc), lfirst(rc));
		}
	}
	SPI_finish();
	/* lost in a crash, the rows are shipped again: no need to wait for the flush */
	xact_commit_unflushed();
}

/*
 * Read, build and compose a bulk: the oldest queued rows of x after
 * *cursor, which is moved past the last row the bulk sends, or with range
 * the next keys of the range; none of them in busy.  NULL when there is
 * nothing to send: *blocked is set when the next row is in flight,
 * *worked when rows were read, *settled when they were all done with
 * without a request (no generation takes them any more, or every one
 * holds their documents: they are forgotten here, and more may follow),
 * *failure when the documents could not be built.  A range's bulk whose
 * keys all build nothing, or are held, has no request: it only moves the
 * range's cursor, in turn.
 */
static BulkBatch *
prepare_batch(ShipIndex *x, ShipRuntime *rt, int generations, ShipCursor *cursor,
			  RangeCursor *range, HTAB *busy, ShipStatus *status, bool *worked,
			  bool *blocked, bool *settled, char **failure)
{
	MemoryContext context = AllocSetContextCreate(CurrentMemoryContext, "flusso bulk",
												  ALLOCSET_DEFAULT_SIZES);
	BulkBatch  *b = MemoryContextAllocZero(context, sizeof(BulkBatch));
	MemoryContext old;
	TimestampTz began = GetCurrentTimestamp();
	bool		prepared;

	b->x = x;
	b->status = status;
	b->context = context;
	/* as many as the cap allows, and as build in about a turn */
	b->limit = Max(1, rt->items_cap / generations);
	b->limit = pace_keys(&rt->pace, SHIP_TURN_MS, b->limit);
	b->after = cursor;
	b->range = range;
	b->busy = busy;
	prepared = prepare(b, failure);
	if (prepared || b->timed_out)
		pace_note(&rt->pace, b->nrows, began);
	if (!prepared)
	{
		/* a pass follows at once */
		*worked |= b->stale;
		*blocked = b->blocked;
		MemoryContextDelete(context);
		return NULL;
	}
	*worked = true;
	old = MemoryContextSwitchTo(context);
	initStringInfo(&b->body);
	b->deletes = palloc(sizeof(bool) * b->nrows * list_length(b->targets));
	b->item_targets = palloc(sizeof(int) * b->nrows * list_length(b->targets));
	compose(b, x->server->bulk_max_bytes);
	if (b->nitems > 0)
		b->req = http_bulk_request(x->server, b->body.data, b->body.len);
	MemoryContextSwitchTo(old);
	if (range != NULL)
	{
		range_consumed(b);
		return b;
	}
	/* the rows sent, or done without: not read again in this turn */
	for (int i = 0; i < b->consumed; i++)
	{
		cursor->set = true;
		cursor->version = b->rows[i].version;
		cursor->seq = b->rows[i].seq;
	}
	if (b->nitems == 0)
	{
		/* nothing to send: the rows are done with */
		Outcome		out = {NIL, NIL, NIL, 0, NULL, false};

		for (int i = 0; i < b->nrows; i++)
			out.done = lappend(out.done, &b->rows[i]);
		record_outcome(b, &out);
		MemoryContextDelete(context);
		*settled = true;
		return NULL;
	}
	return b;
}

/*
 * The next bulk of a turn: queued rows and, while a generation is seeded
 * by ranges, its ranges, taking turns when both have documents to send
 * (so that neither starves the other under load); see prepare_batch().
 */
BulkBatch *
bulk_prepare(ShipIndex *x, ShipRuntime *rt, int generations, ShipCursor *cursor,
			 RangeCursor *range, HTAB *busy, ShipStatus *status, bool *worked,
			 bool *blocked, bool *settled, char **failure)
{
	bool		range_first = range_wanted(range) && range->next;
	BulkBatch  *b = NULL;

	for (int attempt = 0; attempt < 2 && b == NULL && *failure == NULL; attempt++)
	{
		bool		from_range = (attempt == 0) == range_first;
		bool		busy_first = false;

		if (from_range && !range_wanted(range))
			continue;
		b = prepare_batch(x, rt, from_range ? 1 : generations, cursor,
						  from_range ? range : NULL, busy, status, worked, &busy_first,
						  settled, failure);
		*blocked |= busy_first;
		if (b != NULL)
			range->next = !from_range;
	}
	if (b != NULL)
		*blocked = false;
	return b;
}

/*
 * A bulk was answered 413, too large.  Only a document that alone is
 * larger than bulk_max_bytes, and went alone, is refused for good: into
 * *out, as rejected.  Anything else (a cluster or a proxy that takes less
 * than bulk_max_bytes, or less for now) is a failure like any other: the
 * cap halves, and the index backs off; the cap grows back as bulks go
 * through (bulk_record).
 */
static void
too_large(BulkBatch *b, ShipRuntime *rt, Outcome *out, ShipStatus *status)
{
	ShipIndex  *x = b->x;
	QueuedRow  *alone = NULL;
	int			sent = 0;

	for (int i = 0; i < b->nrows; i++)
	{
		if (b->rows[i].first_item >= 0)
		{
			alone = &b->rows[i];
			sent++;
		}
	}
	if (sent == 1 && alone->largest_item > x->server->bulk_max_bytes)
	{
		BulkItemResult *result = palloc0(sizeof(BulkItemResult));

		result->outcome = BULK_REJECTED;
		result->status = 413;
		result->error_type = "request_entity_too_large";
		result->reason = psprintf("the document alone is larger than bulk_max_bytes (%d bytes), and the cluster refused it (%d bytes)",
								  x->server->bulk_max_bytes, alone->largest_item);
		out->rejected = list_make1(alone);
		out->rejections = list_make1(result);
		return;
	}
	rt->items_cap = Max(1, b->nitems / 2);
	ship_status_failed(status,
					   psprintf("%s; the next bulks carry at most %d items",
								http_failure(b->req), rt->items_cap),
					   b->req->retry_after);
}

/*
 * What became of a bulk that ended, read into *out without writing
 * anything; true when the next may follow (every item went, or was set
 * aside for good without stopping the index).  A bulk that failed as a
 * whole fails the step (*status).
 */
bool
bulk_judge(BulkBatch *b, ShipRuntime *rt, Outcome *out, ShipStatus *status)
{
	ShipIndex  *x = b->x;
	HttpRequest *req = b->req;
	BulkItemResult *results;
	char	   *problem;
	char	   *strangers;

	/* a range's keys that all built nothing: there was nothing to send */
	if (req == NULL)
	{
		out->answered = true;
		return true;
	}
	/* a node of the cluster was lost: flusso_status() says so */
	if (req->failed_over[0])
	{
		ereport(LOG,
				(errmsg("flusso shipper: index \"%s\": OpenSearch server \"%s\": %s; the bulk went to node %s",
						x->name, x->server->name, req->failed_over, req->node)));
		ship_record_error(x->name,
						  psprintf("OpenSearch server \"%s\": %s; requests go to its other nodes",
								   x->server->name, req->failed_over));
	}
	/* a node of another cluster, set aside: flusso_status() says so too */
	else if ((strangers = os_nodes_strangers(x->server)) != NULL)
		ship_record_error(x->name, strangers);
	if (req->status == 413)
	{
		too_large(b, rt, out, status);
		return false;
	}
	if (req->status < 200 || req->status >= 300)
	{
		ship_status_failed(status, http_failure(req), req->retry_after);
		return false;
	}
	results = palloc0(sizeof(BulkItemResult) * b->nitems);
	if (!bulk_read_response(req->response, b->nitems, b->deletes, results, &problem))
	{
		ship_status_failed(status,
						   psprintf("OpenSearch server \"%s\" answered a _bulk of %d items with something else than their results: %s",
									x->server->name, b->nitems, problem), -1);
		return false;
	}
	judge(b, results, out);
	out->answered = true;
	return out->retry == 0 && !(out->rejected != NIL && strcmp(x->on_error, "stop") == 0);
}

/* How many of rows (QueuedRow) were sent: those unchanged were not. */
static int
count_sent(List *rows)
{
	int			sent = 0;
	ListCell   *lc;

	foreach(lc, rows)
	{
		QueuedRow  *r = lfirst(lc);

		if (!r->unchanged)
			sent++;
	}
	return sent;
}

/*
 * Record what bulk_judge() found, say it in the index's status, and
 * whether the bulk went through or failed in *status.
 */
void
bulk_record(BulkBatch *b, ShipRuntime *rt, Outcome *out, ShipStatus *status)
{
	ShipIndex  *x = b->x;

	if (out->done != NIL || out->rejected != NIL || (b->range != NULL && out->answered))
		record_outcome(b, out);
	if (!out->answered)
		return;
	ship_record_shipped(x->name, count_sent(out->done));
	if (out->rejected != NIL)
	{
		BulkItemResult *first = linitial(out->rejections);

		ereport(LOG,
				(errmsg("flusso: OpenSearch rejected %d documents of index \"%s\" (%s)",
						list_length(out->rejected), x->name,
						first->error_type ? first->error_type : "unknown")));
		ship_record_error(x->name,
						  psprintf("OpenSearch rejected %d documents (%s): see flusso_rejected('%s')",
								   list_length(out->rejected),
								   first->error_type ? first->error_type : "unknown", x->name));
	}
	if (out->retry > 0)
		ship_status_failed(status,
						   psprintf("OpenSearch server \"%s\" refused %d documents for now (%s); they are sent again",
									x->server->name, out->retry,
									out->retry_type ? out->retry_type : "unknown"),
						   b->req->retry_after);
	else
	{
		status->went_through = true;
		/* after a 413, the cap grows back as bulks go through */
		if (b->req != NULL)
			rt->items_cap = Min(x->server->bulk_max_documents, rt->items_cap * 2);
	}
}


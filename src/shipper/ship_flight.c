/*-------------------------------------------------------------------------
 *
 * ship_flight.c
 *	  An index's turn of _bulk requests: up to the server's
 *	  bulks_in_flight at once, the next one read and built while they
 *	  are, each recorded as it ends, oldest first.
 *
 * Several bulks in flight let OpenSearch index one while it receives
 * another and the shipper builds a third: a node spreads the items of
 * concurrent bulks over its write threads, and a single bulk's round
 * trip otherwise leaves them idle while the next is built.
 *
 * Order per document holds because no id is ever in two bulks in flight:
 * the turn keeps the hashes of the ids of every bulk sent or built and
 * not yet recorded, and a read stops before a row whose id is among them
 * (a row queued again while its bulk is in flight sorts after the turn's
 * cursor, so it is read again, and goes once that bulk ended).  Two ids
 * with one hash wait for each other, which is only slower.  So an older
 * version of a document never follows a newer one, and flusso needs no
 * index.gc_deletes of its own; external versions remain the backstop.
 *
 * A generation seeded by ranges (ship_range.c) has its bulks in the same
 * line, taking turns with the queued rows'; their ids count as in flight
 * too.
 *
 * Rows queued while bulks fly go as soon as there is room: the worker's
 * commit sets the shipper's latch, and a turn with room for a bulk and
 * nothing to send waits for the latch as well as for the oldest bulk.
 *
 * A turn lasts SHIP_TURN_MS at most, and SHIP_WAITED_TURN_MS while a
 * session waits for the shipper to tell it how far the index got
 * (ship_wait.c), which it does between turns.
 *
 * A bulk that failed, or a build that failed, ends the turn: nothing more
 * is sent, the bulks still in flight are waited for and recorded (what
 * they did is done), the one built and not sent is dropped (its rows stay
 * queued), and the index backs off.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "shipper/ship.h"
#include "shipper/ship_flight.h"
#include "shipper/ship_range.h"
#include "shipper/ship_wait.h"

/* An id hash of a bulk in flight, and how many rows in flight have it. */
typedef struct BusyId
{
	uint32		id_hash;		/* hash key */
	int			rows;
} BusyId;

/* A turn of one index. */
typedef struct Flight
{
	ShipIndex  *x;
	ShipRuntime *rt;
	int			generations;	/* active ones: a row's items */
	int			most;			/* bulks in flight at once */
	ShipCursor	cursor;			/* after the last row sent */
	RangeCursor range;			/* the seed ranges the turn ships */
	HTAB	   *busy;			/* BusyId of the rows flying or ready */
	List	   *flying;			/* BulkBatch, oldest first */
	BulkBatch  *ready;			/* built, not sent yet */
	bool		drained;		/* nothing to send, until a bulk lands */
	bool		stopping;		/* a bulk or a build failed */
	bool		worked;
	TimestampTz end;
} Flight;

/* Count the rows b sends in f->busy, or (add false) no longer. */
static void
mark_busy(Flight *f, BulkBatch *b, bool add)
{
	for (int i = 0; i < b->nrows; i++)
	{
		QueuedRow  *r = &b->rows[i];
		BusyId	   *entry;
		bool		found;

		if (r->first_item < 0)
			continue;
		entry = hash_search(f->busy, &r->id_hash, add ? HASH_ENTER : HASH_FIND, &found);
		if (add)
			entry->rows = found ? entry->rows + 1 : 1;
		else if (entry != NULL && --entry->rows == 0)
			hash_search(f->busy, &r->id_hash, HASH_REMOVE, NULL);
	}
}

/* A bulk recorded, or dropped unsent: its ids are free, its memory gone. */
static void
release(Flight *f, BulkBatch *b)
{
	mark_busy(f, b, false);
	MemoryContextDelete(b->context);
}

/*
 * Build the next bulk into f->ready, unless the turn is over.  Rows done
 * with unsent (ship_digest.c) are followed by the next ones at once.
 * When there is nothing to send, the queue is read again once the latch
 * was set or a bulk landed, and when the next row waits for a bulk in
 * flight, once a bulk landed: rows queued meanwhile go while the others
 * are in flight, and the turn ends when none is.
 */
static void
prepare_next(Flight *f, ShipStatus *status)
{
	bool		blocked = false;
	bool		settled;
	char	   *failure = NULL;

	do
	{
		if (f->ready != NULL || f->drained || f->stopping || GetCurrentTimestamp() >= f->end)
			return;
		settled = false;
		f->ready = bulk_prepare(f->x, f->rt, f->generations, &f->cursor, &f->range, f->busy,
								status, &f->worked, &blocked, &settled, &failure);
	} while (settled && f->ready == NULL && failure == NULL && !blocked);
	if (f->ready != NULL)
		mark_busy(f, f->ready, true);
	else if (failure != NULL)
	{
		ship_status_failed(status, failure, -1);
		f->stopping = true;
	}
	else if (!blocked)
		f->drained = true;
}

/* Send what is built while there is room, building the next meanwhile. */
static void
send_ready(Flight *f, ShipStatus *status)
{
	while (f->ready != NULL && !f->stopping && list_length(f->flying) < f->most)
	{
		/* (a range's bulk without a request only keeps its place in line) */
		if (f->ready->req != NULL)
			http_start(f->ready->req);
		f->flying = lappend(f->flying, f->ready);
		f->ready = NULL;
		prepare_next(f, status);
	}
}

/* Wait for the oldest bulk in flight, and record what became of it. */
static void
land_oldest(Flight *f, ShipStatus *status)
{
	BulkBatch  *b = linitial(f->flying);
	Outcome		out = {NIL, NIL, NIL, 0, NULL, false};

	f->flying = list_delete_first(f->flying);
	if (b->req != NULL)
		http_finish(b->req);	/* its response lands in b's memory */
	if (!bulk_judge(b, f->rt, &out, status))
		f->stopping = true;
	/* a range bulk not done with: the cursor stays before its keys */
	if (b->range != NULL && !range_went_through(&out))
		b->range->broken = true;
	bulk_record(b, f->rt, &out, status);
	release(f, b);
}

/*
 * Ship the oldest queued documents of x, bulk after bulk for up to
 * SHIP_TURN_MS: true when a bulk was sent (or tried), or rows were read,
 * false when there was nothing to send.  Whether a bulk went through, and
 * what failed, is said in *status, for the loop to record.
 */
bool
ship_bulk(ShipIndex *x, ShipRuntime *rt, ShipStatus *status)
{
	Flight		f = {0};
	HASHCTL		ctl;
	TimestampTz started;
	ListCell   *lc;

	foreach(lc, x->generations)
	{
		ShipGeneration *g = lfirst(lc);

		if (ship_generation_active(g))
			f.generations++;
	}
	if (f.generations == 0 || x->server == NULL)
		return false;
	if (rt->items_cap <= 0 || rt->items_cap > x->server->bulk_max_documents)
		rt->items_cap = x->server->bulk_max_documents;

	f.x = x;
	f.rt = rt;
	f.most = x->server->bulks_in_flight;
	started = GetCurrentTimestamp();
	f.end = TimestampTzPlusMilliseconds(started, SHIP_TURN_MS);
	ctl.keysize = sizeof(uint32);
	ctl.entrysize = sizeof(BusyId);
	ctl.hcxt = CurrentMemoryContext;
	f.busy = hash_create("flusso ids in flight", 1024, &ctl,
						 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	range_cursor_init(&f.range, x);
	prepare_next(&f, status);
	for (;;)
	{
		HttpRequest *oldest;

		send_ready(&f, status);
		if (f.flying == NIL)
			break;

		/*
		 * With room for another bulk and nothing to put in it, what the
		 * worker queues while the oldest flies (it sets the latch at
		 * commit) goes at once, not after the oldest landed.
		 */
		oldest = ((BulkBatch *) linitial(f.flying))->req;
		if (f.drained && !f.stopping && list_length(f.flying) < f.most &&
			oldest != NULL && !http_finish_or_latch(oldest))
		{
			f.drained = false;
			prepare_next(&f, status);
			continue;
		}
		land_oldest(&f, status);
		/* sessions wait on this index: end the turn soon, to tell them */
		if (TimestampDifferenceExceeds(started, GetCurrentTimestamp(), SHIP_WAITED_TURN_MS) &&
			ship_waited_for(x->name))
			f.end = GetCurrentTimestamp();
		if (f.stopping && f.ready != NULL)
		{
			release(&f, f.ready);
			f.ready = NULL;
		}
		f.drained = false;
		prepare_next(&f, status);
	}
	hash_destroy(f.busy);
	/* every range shipped: the next pass may serve the generation */
	if (range_finish(&f.range))
		f.worked = true;
	return f.worked;
}

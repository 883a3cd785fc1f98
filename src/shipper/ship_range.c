/*-------------------------------------------------------------------------
 *
 * ship_range.c
 *	  Seeding a generation by ranges: the shipper reads the root table's
 *	  keys in key order, after the last one it recorded, and ships their
 *	  documents a bulk at a time, instead of reading one flusso.outbox row
 *	  per document the seed queued (and deleting it).
 *
 * A range's documents are built from the current rows when they ship, and
 * carry the version the generation began with (its ranges_version): every
 * change the worker queued for the generation since has a higher version,
 * so whichever of the two lands last, OpenSearch keeps the change's, and
 * that is built at least as late.  A key whose row builds nothing (a
 * filter leaves it out) is passed over: the generation is new, it holds no
 * document to delete.  Keys added after the generation began are read too
 * if they sort after the cursor, which is only work done twice.
 *
 * The cursor moves in the generation's row as each range bulk ends, oldest
 * first, and only while every range bulk of the turn went through: a bulk
 * that failed leaves the cursor before it, and the next turn reads its
 * keys again (their documents go again at the same version, which
 * external_gte takes).  A range's ids count as in flight like a queued
 * row's (ship_flight.c), and a read stops before a key in flight.  Once a
 * read finds no key after the cursor and every range bulk of the turn
 * ended well, the generation's ranges are done; it serves once it is
 * seeded and drained as well (generations.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "executor/spi.h"

#include "document/docid.h"
#include "document/keyset.h"
#include "shipper/ship_range.h"
#include "store/catalog_opensearch_generation.h"
#include "util/xact.h"

/*
 * The generation of x whose seed the turn ships by ranges, if any: one
 * that is created and being seeded or seeded, with ranges left.
 */
void
range_cursor_init(RangeCursor *range, ShipIndex *x)
{
	ListCell   *lc;

	memset(range, 0, sizeof(RangeCursor));
	range->context = CurrentMemoryContext;
	range->next = true;
	foreach(lc, x->generations)
	{
		ShipGeneration *g = lfirst(lc);

		if (g->row.ranges_version >= 0 && !g->row.ranges_done && g->row.created &&
			g->row.truncate_version < 0 &&
			(g->row.state == GENERATION_SEEDING || g->row.state == GENERATION_SEEDED))
		{
			range->g = g;
			return;
		}
	}
}

/* Is there a range left to read this turn? */
bool
range_wanted(const RangeCursor *range)
{
	return range->g != NULL && !range->end && !range->broken;
}

/*
 * The next keys of the range after the cursor, at most b->limit, up to the
 * first whose id is in flight, as rows of b; in a transaction.
 */
void
range_read(BulkBatch *b)
{
	RangeCursor *range = b->range;
	const DocumentQuery *q = ship_build_query(b->x);
	MemoryContext old;
	List	   *keys;
	ListCell   *lc;
	int			n = 0;

	if (!range->known)
	{
		old = MemoryContextSwitchTo(range->context);
		range->nkeys = q->nkeys;
		range->after = generation_ranges_after(range->g->row.generation, q->nkeys);
		range->known = true;
		MemoryContextSwitchTo(old);
	}
	old = MemoryContextSwitchTo(b->context);
	keys = doc_read_keys_after(q, b->x->owner, range->after, b->limit);
	b->rows = palloc0(sizeof(QueuedRow) * Max(list_length(keys), 1));
	b->keys = palloc(sizeof(char **) * Max(list_length(keys), 1));
	foreach(lc, keys)
	{
		QueuedRow  *r = &b->rows[n];
		char	  **key = lfirst(lc);

		r->id = doc_id_join(key, q->nkeys);
		r->id_hash = hash_bytes((const unsigned char *) r->id, strlen(r->id));
		if (ship_id_busy(b->busy, r->id_hash))
		{
			b->blocked = n == 0;
			break;
		}
		r->version = range->g->row.ranges_version;
		r->first_item = -1;
		b->keys[n++] = key;
	}
	b->nrows = n;
	if (keys == NIL)
		range->end = true;
	MemoryContextSwitchTo(old);
}

/*
 * The range's generation is b's only target, if the catalog still has it
 * active (read after the keys, as read_targets() does for queued rows):
 * one retired meanwhile takes nothing, and the next pass reads the
 * catalog again.
 */
bool
range_targets(BulkBatch *b)
{
	ShipGeneration *g = b->range->g;
	int			n;
	int64	   *generations = generation_targets(b->x->name, &n);

	for (int i = 0; i < n; i++)
	{
		if (generations[i] == g->row.generation)
		{
			MemoryContext old = MemoryContextSwitchTo(b->context);

			b->targets = list_make1(g);
			MemoryContextSwitchTo(old);
			return true;
		}
	}
	b->status->reread = true;
	b->range->g = NULL;
	return false;
}

/* The turn reads on after the last key b took. */
void
range_consumed(BulkBatch *b)
{
	RangeCursor *range = b->range;
	MemoryContext old;

	if (b->consumed == 0)
		return;
	old = MemoryContextSwitchTo(range->context);
	range->after = palloc(sizeof(char *) * range->nkeys);
	for (int k = 0; k < range->nkeys; k++)
		range->after[k] = pstrdup(b->keys[b->consumed - 1][k]);
	MemoryContextSwitchTo(old);
}

/*
 * Is a range bulk that ended done with: every document it sent went
 * through or was refused for good (as a document alone larger than the
 * cluster takes is)?
 */
bool
range_went_through(const Outcome *out)
{
	return out->retry == 0 && (out->answered || out->rejected != NIL);
}

/*
 * Record a range bulk that ended, in the caller's transaction: its
 * documents refused for good go to flusso.rejected, and the cursor moves
 * past its last key if it, and every range bulk of the turn before it,
 * is done with (the caller marked the range broken otherwise).
 */
void
range_record(BulkBatch *b, const Outcome *out)
{
	ListCell   *lc,
			   *rc;

	forboth(lc, out->rejected, rc, out->rejections)
		ship_record_rejected(b->x->name, lfirst(lc), lfirst(rc));
	if (!b->range->broken && b->consumed > 0)
		generation_ranges_advance(b->range->g->row.generation, b->keys[b->consumed - 1],
								  b->range->nkeys, b->consumed);
}

/*
 * At the end of a turn (no bulk in flight): when a read found no key
 * after the cursor and every range bulk went through, every range of the
 * generation is shipped.  True when that was recorded.
 */
bool
range_finish(RangeCursor *range)
{
	if (range->g == NULL || !range->end || range->broken)
		return false;
	if (!xact_begin(true, NULL, 0))
		return false;
	generation_ranges_finish(range->g->row.generation);
	xact_commit();
	range->g->row.ranges_done = true;
	return true;
}

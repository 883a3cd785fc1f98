/*-------------------------------------------------------------------------
 *
 * ship_batch.h
 *	  One _bulk of an index's turn, as ship.c sends it and ship_record.c
 *	  records how its rows fared.  Private to shipper/.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SHIPPER_SHIP_BATCH_H
#define FLUSSO_SHIPPER_SHIP_BATCH_H

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/hsearch.h"

#include "opensearch/bulk.h"
#include "opensearch/http.h"
#include "shipper/shipper.h"

/*
 * A document's digest: the first bytes of the SHA-256 of its source
 * (ship_digest.c), kept for the first generations a bulk targets.
 */
#define SHIP_DIGEST_LEN 16
#define SHIP_MAX_DIGEST_TARGETS 32

/* A queued row, and what it is sent as. */
typedef struct QueuedRow
{
	char	   *id;
	int64		version;
	bool		seed_only;
	int64		seq;
	uint32		id_hash;		/* hash_bytes() of id: see ship_flight.c */
	char	   *doc;			/* built now; NULL: builds nothing (delete) */
	int			first_item;		/* its items in the bulk, -1: not sent */
	int			nitems;
	int			largest_item;	/* bytes of its largest item */
	uint8		digest[SHIP_DIGEST_LEN];	/* of doc */
	uint32		held;			/* targets that hold doc: not sent to */
	uint32		written;		/* targets that stored doc, as answered */
	bool		unchanged;		/* every target holds doc: nothing sent */
} QueuedRow;

/* Where the next bulk of a turn reads from: after the last row sent. */
typedef struct ShipCursor
{
	bool		set;			/* false: from the oldest row */
	int64		version;
	int64		seq;
} ShipCursor;

/*
 * The seed ranges of a generation a turn ships (ship_range.c): its keys
 * after the last one recorded, read in key order.
 */
typedef struct RangeCursor
{
	ShipGeneration *g;			/* NULL: no generation to seed by ranges */
	int			nkeys;
	bool		known;			/* after read from the catalog */
	char	  **after;			/* the last key read, NULL: from the start */
	bool		end;			/* a read found no key after it */
	bool		broken;			/* a range bulk of the turn failed */
	bool		next;			/* the next bulk is a range's, if it can */
	MemoryContext context;		/* the turn's */
} RangeCursor;

typedef struct BulkBatch
{
	ShipIndex  *x;
	List	   *targets;		/* ShipGeneration that take documents */
	int			limit;			/* rows to read */
	const ShipCursor *after;	/* read rows after this */
	HTAB	   *busy;			/* id hashes of the rows in flight */
	bool		blocked;		/* the first row read was in flight */
	QueuedRow  *rows;
	int			nrows;
	StringInfoData body;		/* the NDJSON of the rows sent */
	bool	   *deletes;		/* which of its items are deletes */
	int		   *item_targets;	/* the position in targets of each item */
	int			nitems;
	HttpRequest *req;
	bool		stale;			/* not read: the catalog changed since the pass */
	bool		timed_out;		/* its build outlasted flusso.build_timeout */
	RangeCursor *range;			/* a range's bulk, or NULL: the outbox's */
	char	  ***keys;			/* a range's: the root key of each row */
	int			consumed;		/* a range's: rows sent or building nothing */
	MemoryContext context;		/* the batch's, outlives the transactions */
} BulkBatch;

/* How the rows fared: done, rejected (with an item's result), or not. */
typedef struct Outcome
{
	List	   *done;			/* QueuedRow */
	List	   *rejected;		/* QueuedRow, with rejections */
	List	   *rejections;		/* BulkItemResult, one per rejected row */
	int			retry;			/* rows to try again */
	const char *retry_type;		/* the error type of the first, or NULL */
	bool		answered;		/* the items' results were read */
} Outcome;

/* ship.c */
extern bool ship_generation_takes(const ShipGeneration *g, const QueuedRow *r);
extern BulkBatch *bulk_prepare(ShipIndex *x, ShipRuntime *rt, int generations,
							   ShipCursor *cursor, RangeCursor *range, HTAB *busy,
							   bool *worked, bool *blocked, bool *settled, char **failure);
extern bool bulk_judge(BulkBatch *b, ShipRuntime *rt, Outcome *out, ShipStatus *status);
extern void bulk_record(BulkBatch *b, ShipRuntime *rt, Outcome *out, ShipStatus *status);

/* ship_digest.c */
extern void ship_digest_compare(BulkBatch *b);
extern bool ship_digest_held(const QueuedRow *r, int t);
extern void ship_digest_note_results(const BulkBatch *b, QueuedRow *r,
									 const BulkItemResult *results);
extern void ship_digest_record(BulkBatch *b);

/* ship_flight.c */
extern bool ship_id_busy(HTAB *busy, uint32 id_hash);

/* ship_range.c */
extern void range_cursor_init(RangeCursor *range, ShipIndex *x);
extern bool range_wanted(const RangeCursor *range);
extern void range_read(BulkBatch *b);
extern bool range_targets(BulkBatch *b);
extern void range_consumed(BulkBatch *b);
extern bool range_went_through(const Outcome *out);
extern void range_record(BulkBatch *b, const Outcome *out);
extern bool range_finish(RangeCursor *range);

/* ship_record.c */
extern void ship_record_batch(BulkBatch *b, Outcome *out);
extern void ship_record_rejected(const char *index, const QueuedRow *r,
								 const BulkItemResult *result);

#endif							/* FLUSSO_SHIPPER_SHIP_BATCH_H */

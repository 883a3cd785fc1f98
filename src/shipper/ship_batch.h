/*-------------------------------------------------------------------------
 *
 * ship_batch.h
 *	  One _bulk of an index's turn, as ship.c sends it and records how its
 *	  rows fared.  Private to shipper/.
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
#include "shipper/ship_catalog.h"
#include "store/catalog_rejected.h"

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
	ShipStatus *status;			/* what the turn came to */
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

/* Does generation g take row r?  A served one takes no seed's row. */
static inline bool
ship_generation_takes(const ShipGeneration *g, const QueuedRow *r)
{
	return !(r->seed_only && g->row.state == GENERATION_SERVED);
}

/* Is a row of this id hash in a bulk in flight (ship_flight.c)? */
static inline bool
ship_id_busy(HTAB *busy, uint32 id_hash)
{
	return hash_search(busy, &id_hash, HASH_FIND, NULL) != NULL;
}

/* Row r is refused for good, for the reason result says. */
static inline void
ship_record_rejected(const char *index, const QueuedRow *r, const BulkItemResult *result)
{
	catalog_record_rejected(index, r->id, r->version, result->status,
							result->error_type ? result->error_type : "unknown",
							result->reason ? result->reason : "");
}

#endif							/* FLUSSO_SHIPPER_SHIP_BATCH_H */

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

#include "opensearch/bulk.h"
#include "opensearch/http.h"
#include "shipper/shipper.h"

/* A queued row, and what it is sent as. */
typedef struct QueuedRow
{
	char	   *id;
	int64		version;
	bool		seed_only;
	int64		seq;
	char	   *doc;			/* built now; NULL: builds nothing (delete) */
	int			first_item;		/* its items in the bulk, -1: not sent */
	int			nitems;
	int			largest_item;	/* bytes of its largest item */
} QueuedRow;

typedef struct BulkBatch
{
	ShipIndex  *x;
	List	   *targets;		/* ShipGeneration that take documents */
	int			limit;			/* rows to read */
	const QueuedRow *after;		/* read rows after this one, or NULL */
	QueuedRow  *rows;
	int			nrows;
	StringInfoData body;		/* the NDJSON of the rows sent */
	bool	   *deletes;		/* which of its items are deletes */
	int			nitems;
	HttpRequest *req;
	bool		stale;			/* not read: the catalog changed since the pass */
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

/* ship_record.c */
extern void ship_record_batch(BulkBatch *b, Outcome *out);

#endif							/* FLUSSO_SHIPPER_SHIP_BATCH_H */

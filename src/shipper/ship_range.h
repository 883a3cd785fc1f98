/*-------------------------------------------------------------------------
 *
 * ship_range.h
 *	  A seed's bulks by ranges of root keys, and its generation's cursor
 *	  (ship_range.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SHIPPER_SHIP_RANGE_H
#define FLUSSO_SHIPPER_SHIP_RANGE_H

#include "shipper/ship_batch.h"

extern void range_cursor_init(RangeCursor *range, ShipIndex *x);
extern bool range_wanted(const RangeCursor *range);
extern void range_read(BulkBatch *b);
extern bool range_targets(BulkBatch *b);
extern void range_consumed(BulkBatch *b);
extern bool range_went_through(const Outcome *out);
extern void range_record(BulkBatch *b, const Outcome *out);
extern bool range_finish(RangeCursor *range);

#endif							/* FLUSSO_SHIPPER_SHIP_RANGE_H */

/*-------------------------------------------------------------------------
 *
 * ship.h
 *	  One _bulk of an index: prepared from the outbox or a seed's range,
 *	  judged by its answer, its outcome recorded (ship.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SHIPPER_SHIP_H
#define FLUSSO_SHIPPER_SHIP_H

#include "shipper/ship_batch.h"

extern BulkBatch *bulk_prepare(ShipIndex *x, ShipRuntime *rt, int generations,
							   ShipCursor *cursor, RangeCursor *range, HTAB *busy,
							   ShipStatus *status, bool *worked, bool *blocked,
							   bool *settled, char **failure);
extern bool bulk_judge(BulkBatch *b, ShipRuntime *rt, Outcome *out, ShipStatus *status);
extern void bulk_record(BulkBatch *b, ShipRuntime *rt, Outcome *out, ShipStatus *status);
extern const char *ship_index_building(void);

#endif							/* FLUSSO_SHIPPER_SHIP_H */

/*-------------------------------------------------------------------------
 *
 * ship_digest.h
 *	  No item for a document a generation already holds: the digests of
 *	  what each generation stored (ship_digest.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SHIPPER_SHIP_DIGEST_H
#define FLUSSO_SHIPPER_SHIP_DIGEST_H

#include "shipper/ship_batch.h"

extern void ship_digest_compare(BulkBatch *b);
extern bool ship_digest_held(const QueuedRow *r, int t);
extern void ship_digest_note_results(const BulkBatch *b, QueuedRow *r,
									 const BulkItemResult *results);
extern void ship_digest_record(BulkBatch *b);

#endif							/* FLUSSO_SHIPPER_SHIP_DIGEST_H */

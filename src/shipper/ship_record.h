/*-------------------------------------------------------------------------
 *
 * ship_record.h
 *	  What became of a bulk's rows, recorded (ship_record.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SHIPPER_SHIP_RECORD_H
#define FLUSSO_SHIPPER_SHIP_RECORD_H

#include "shipper/ship_batch.h"

extern void ship_record_batch(BulkBatch *b, Outcome *out);

#endif							/* FLUSSO_SHIPPER_SHIP_RECORD_H */

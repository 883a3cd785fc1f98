/*-------------------------------------------------------------------------
 *
 * ship_flight.h
 *	  An index's turn at shipping: bulks in flight, in order per document
 *	  (ship_flight.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SHIPPER_SHIP_FLIGHT_H
#define FLUSSO_SHIPPER_SHIP_FLIGHT_H

#include "shipper/ship_catalog.h"

extern bool ship_bulk(ShipIndex *x, ShipRuntime *rt, ShipStatus *status);

#endif							/* FLUSSO_SHIPPER_SHIP_FLIGHT_H */

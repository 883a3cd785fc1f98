/*-------------------------------------------------------------------------
 *
 * generations.h
 *	  The steps an index's generations need before its bulks: create, map
 *	  the fields a definition gained in place, empty, serve, retire
 *	  (generations.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SHIPPER_GENERATIONS_H
#define FLUSSO_SHIPPER_GENERATIONS_H

#include "shipper/ship_catalog.h"

extern bool ship_generations(ShipIndex *x, ShipRuntime *rt, ShipStatus *status);
extern bool ship_is_ready(ShipIndex *x);

#endif							/* FLUSSO_SHIPPER_GENERATIONS_H */

/*-------------------------------------------------------------------------
 *
 * ship_owner.h
 *	  Which OpenSearch indexes and aliases are this database's: a
 *	  generation's index is owned before it is written, an alias moved
 *	  only from what is this database's (ship_owner.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SHIPPER_SHIP_OWNER_H
#define FLUSSO_SHIPPER_SHIP_OWNER_H

#include "shipper/ship_catalog.h"

extern bool ship_generation_owned(ShipIndex *x, ShipGeneration *g, bool writing,
								  ShipStatus *status, bool *foreign);
extern bool ship_alias_may_move(ShipIndex *x, ShipGeneration *g, List *holders,
								bool moving, ShipStatus *status);
extern void ship_alias_taken(ShipIndex *x, ShipStatus *status);
extern void ship_conflict_over(ShipIndex *x, ShipStatus *status);

#endif							/* FLUSSO_SHIPPER_SHIP_OWNER_H */

/*-------------------------------------------------------------------------
 *
 * ship_wait.h
 *	  How far OpenSearch holds an index's changes, and a refresh, while a
 *	  session waits (ship_wait.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SHIPPER_SHIP_WAIT_H
#define FLUSSO_SHIPPER_SHIP_WAIT_H

#include "ipc/shared.h"
#include "shipper/ship_catalog.h"

/* a turn that sessions wait on ends after this long, to tell them */
#define SHIP_WAITED_TURN_MS 20

extern void ship_answer_waiters(ShipIndex *x, ShipRuntime *rt, DatabaseEntry *entry);
extern bool ship_waited_for(const char *index);

#endif							/* FLUSSO_SHIPPER_SHIP_WAIT_H */

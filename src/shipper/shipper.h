/*-------------------------------------------------------------------------
 *
 * shipper.h
 *	  The shipper's entry point, which the launcher registers by name
 *	  (shipper.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SHIPPER_SHIPPER_H
#define FLUSSO_SHIPPER_SHIPPER_H

#include "fmgr.h"

extern PGDLLEXPORT void flusso_shipper_main(Datum arg);

#endif							/* FLUSSO_SHIPPER_SHIPPER_H */

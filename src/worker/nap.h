/*-------------------------------------------------------------------------
 *
 * nap.h
 *	  How long the worker sleeps once it has read all the flushed WAL.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_WORKER_NAP_H
#define FLUSSO_WORKER_NAP_H

#include "access/xlogdefs.h"

/*
 * The shortest sleep, right after WAL arrived: short enough that a change
 * is seen within tens of milliseconds, long enough that under a steady
 * load each turn takes several commits, not one or two.  At 200 tx/s
 * (test/bench/latency.sh) 25 ms costs the worker and the shipper together
 * a quarter less CPU than 10 ms did, for 8 ms more at the median.
 */
#define NAP_MIN_MS 25

typedef struct WorkerNap
{
	XLogRecPtr	seen;			/* where the reader stood after the last turn */
	long		length_ms;		/* the last sleep */
} WorkerNap;

extern void nap_init(WorkerNap *nap);
extern long nap_length(WorkerNap *nap, XLogRecPtr position);

#endif							/* FLUSSO_WORKER_NAP_H */

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

/* The shortest sleep, right after WAL arrived. */
#define NAP_MIN_MS 10

typedef struct WorkerNap
{
	XLogRecPtr	seen;			/* where the reader stood after the last turn */
	long		length_ms;		/* the last sleep */
} WorkerNap;

extern void nap_init(WorkerNap *nap);
extern long nap_length(WorkerNap *nap, XLogRecPtr position);

#endif							/* FLUSSO_WORKER_NAP_H */

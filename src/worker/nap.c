/*-------------------------------------------------------------------------
 *
 * nap.c
 *	  How long the worker sleeps once it has read all the flushed WAL: not
 *	  long after WAL arrived, longer and longer while none does.
 *
 * Nothing wakes a decoding process outside a walsender when WAL is
 * flushed: PostgreSQL 15 sets the walsenders' latches, and 16 and later
 * broadcast condition variables of the walsenders' private shared memory
 * (replication/walsender_private.h), only when max_wal_senders is set; so
 * the worker polls.  Right after a turn that read WAL it looks again after
 * NAP_MIN_MS, and twice as long after every look that finds none, up to
 * flusso.naptime: a busy database sees its commits decoded within tens of
 * milliseconds, and an idle one costs what it did with a fixed
 * flusso.naptime, a handful of short sleeps after each burst aside.  Any
 * WAL counts, published or not, the worker's own included: it costs the
 * few cheap looks of one back-off, and the next change is likely near.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "settings.h"
#include "worker/nap.h"

void
nap_init(WorkerNap *nap)
{
	nap->seen = InvalidXLogRecPtr;
	nap->length_ms = flusso_naptime;
}

/*
 * The next sleep of a worker that has read all the flushed WAL, up to
 * position: the shortest if the reader moved since the last turn, twice
 * the last one otherwise, never longer than flusso.naptime (which a
 * reload may have lowered).
 */
long
nap_length(WorkerNap *nap, XLogRecPtr position)
{
	if (position != nap->seen)
	{
		nap->seen = position;
		nap->length_ms = NAP_MIN_MS;
	}
	else
		nap->length_ms = Min(nap->length_ms * 2, (long) flusso_naptime);
	nap->length_ms = Min(nap->length_ms, (long) flusso_naptime);
	return nap->length_ms;
}

/*-------------------------------------------------------------------------
 *
 * catchup.h
 *	  How the worker turns batches into documents: resolved into the
 *	  documents the indexes owe, built when due, in short transactions.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_WORKER_CATCHUP_H
#define FLUSSO_WORKER_CATCHUP_H

#include "cdc/batch.h"
#include "cdc/decode.h"
#include "ipc/shared.h"
#include "engine/engine_stream.h"
#include "engine/seed.h"

typedef struct Catchup
{
	TimestampTz owed_since;		/* documents owed since: built within
								 * flusso.max_build_delay */
} Catchup;

/* What became of a batch handed to catchup_resolve() */
typedef enum CatchupResult
{
	CATCHUP_RESOLVED,			/* into the documents owed, its signals acted on */
	CATCHUP_STALE,				/* not: the indexes changed, compile them again */
	CATCHUP_EXTENSION_GONE		/* not: the extension was dropped */
} CatchupResult;

extern void catchup_init(Catchup *catchup);
extern CatchupResult catchup_resolve(Catchup *catchup, DatabaseEntry *entry, Engine *engine,
							ChangeBatch *batch, Seeder *seeder, MemoryContext context,
							bool *rewritten);
extern bool catchup_build_due(Catchup *catchup, Engine *engine, bool behind,
							  CaptureStream *stream, bool seeding);
extern bool catchup_build(Catchup *catchup, DatabaseEntry *entry, Engine *engine);

#endif							/* FLUSSO_WORKER_CATCHUP_H */

/*-------------------------------------------------------------------------
 *
 * seed.h
 *	  Seeding an index from its tables by DBLog watermarks: chunks of root
 *	  keys read between a low and a high watermark, built when the high
 *	  watermark arrives in the stream, into a next generation swapped in at
 *	  the end.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SNAPSHOT_SEED_H
#define FLUSSO_SNAPSHOT_SEED_H

#include "utils/uuid.h"
#include "engine/engine.h"

#define UUID_TEXT_LEN (UUID_LEN * 2 + 4 + 1)

typedef enum SeedState
{
	SEED_CHUNK_DUE,				/* read the next chunk */
	SEED_AWAIT_LOW,				/* chunk read: wait for its low watermark */
	SEED_AWAIT_HIGH,			/* in the window: wait for the high one */
	SEED_FINISH_DUE				/* all written: swap the next generation in */
} SeedState;

/* One seed in progress; the worker runs one at a time. */
typedef struct Seed
{
	EngineIndex *ei;
	MemoryContext context;		/* lives as long as the seed */
	MemoryContext chunk_context;	/* the chunk and the keys it drops */
	SeedState	state;
	int			nkeys;			/* root key columns */
	char	  **last_key;		/* cursor: last key written, NULL at start */
	char	  **max_key;		/* largest key at the start, NULL if none */
	List	   *chunk;			/* keys read (char ** rows), in key order */
	bool		final_chunk;	/* nothing lies beyond this chunk */
	char		low[UUID_TEXT_LEN];
	char		high[UUID_TEXT_LEN];
	XLogRecPtr	low_lsn;		/* the low watermark's commit: the version */
	int64		done;			/* root keys read so far */
	int64		total;			/* estimated root rows */
} Seed;

extern void seed_mark_resumable(Engine *engine);
extern bool seed_wanted(Engine *engine);
extern Seed *seed_begin(Engine *engine, const char *publication, MemoryContext parent);
extern void seed_read_chunk(Seed **seed);
extern bool seed_watermark(Seed **seed, const char *id, XLogRecPtr lsn);
extern void seed_abandon(Seed **seed, EngineIndex *ei);
extern bool seed_handle_signals(Engine *engine, Seed **seed, List *signals);
extern void seed_finish(Seed **seed);
extern void seed_forget_watermarks(void);

#endif							/* FLUSSO_SNAPSHOT_SEED_H */

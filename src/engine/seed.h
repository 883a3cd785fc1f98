/*-------------------------------------------------------------------------
 *
 * seed.h
 *	  Seeding an index from its tables by DBLog watermarks: chunks of root
 *	  keys read between a low and a high watermark, built when the high
 *	  watermark arrives in the stream, into a next generation swapped in at
 *	  the end.  The worker holds a Seeder, opaque, and moves it on with
 *	  seed_step(); what the stream brings (watermarks, indexes to seed
 *	  afresh) it hands over as the batch's signals are acted on.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_ENGINE_SEED_H
#define FLUSSO_ENGINE_SEED_H

#include "engine/engine.h"

typedef struct Seeder Seeder;	/* the worker's seeding: one index at a time */

extern Seeder *seed_create(Engine *engine, const char *publication, MemoryContext context);
extern void seed_mark_resumable(Seeder *seeder);
extern void seed_forget_watermarks(void);
extern void seed_step(Seeder *seeder, bool look);
extern bool seed_due(const Seeder *seeder);
extern bool seed_running(const Seeder *seeder);
extern void seed_take_watermarks(Seeder *seeder, List *watermarks);
extern void seed_restart(Seeder *seeder, List *indexes);
extern void seed_wake(Seeder *seeder);

#endif							/* FLUSSO_ENGINE_SEED_H */

/*-------------------------------------------------------------------------
 *
 * engine_seed.h
 *	  The seed's verbs: which index to seed, its root keys read in key
 *	  order, the keys the stream resolved while a chunk's window was open,
 *	  and its next generation of documents, built from keys and swapped
 *	  in.  The seed sees keys, never change records or build statements.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_ENGINE_ENGINE_SEED_H
#define FLUSSO_ENGINE_ENGINE_SEED_H

#include "engine/engine.h"

/* which index (engine.c) */
extern EngineIndex *engine_next_to_seed(Engine *engine, EngineIndex *after);

/* its keys and its next generation (seeding.c) */
extern const char *engine_root_table(const EngineIndex *ei);
extern int	engine_key_count(const EngineIndex *ei);
extern char *engine_unpublished_table(EngineIndex *ei, const char *publication);
extern char **engine_largest_key(EngineIndex *ei);
extern int64 engine_estimated_rows(EngineIndex *ei);
extern List *engine_read_keys(EngineIndex *ei, char **after, char **upto, int limit);
extern void engine_capture_begin(EngineIndex *ei, MemoryContext context);
extern List *engine_capture_end(EngineIndex *ei);
extern List *engine_keys_except(EngineIndex *ei, List *keys, List *except);
extern void engine_write_next(EngineIndex *ei, bool next);
extern void engine_next_begin(EngineIndex *ei);
extern bool engine_next_exists(EngineIndex *ei);
extern bool engine_writes_next(const EngineIndex *ei);
extern void engine_next_swap(EngineIndex *ei);

/* a chunk's documents, built (apply.c) */
extern bool engine_build(EngineIndex *ei, List *keys, XLogRecPtr version, int64 *written);
extern int	engine_chunk_keys(const EngineIndex *ei, int limit, int shares);

#endif							/* FLUSSO_ENGINE_ENGINE_SEED_H */

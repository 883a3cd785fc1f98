/*-------------------------------------------------------------------------
 *
 * engine.h
 *	  The engine's two handles, Engine (every index of the database) and
 *	  EngineIndex (one index, compiled), opaque outside src/engine/, and
 *	  the verbs on one index that every client of the engine uses.
 *
 * The engine is the only bridge between what changed (cdc/) and what to
 * build (document/).  The worker sees it through three headers: this one;
 * engine_stream.h, which turns a batch of changes and its signals into
 * documents; and seed.h, the seeds.  Neither this header nor seed.h
 * includes anything of cdc/, document/ or sink/ (test/layout.sh follows
 * includes to check it).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_ENGINE_ENGINE_H
#define FLUSSO_ENGINE_ENGINE_H

#include "access/xlogdefs.h"
#include "nodes/pg_list.h"

typedef struct Engine Engine;			/* every index of the database */
typedef struct EngineIndex EngineIndex; /* one index, compiled */

/* one index (engine.c; engine_rebuild, rebuild.c) */
extern EngineIndex *engine_index(Engine *engine, const char *name);
extern List *engine_readers(Engine *engine, Oid relid);
extern const char *engine_index_name(const EngineIndex *ei);
extern const char *engine_index_version(const EngineIndex *ei);
extern bool engine_index_broken(const EngineIndex *ei);
extern bool engine_index_needs_seed(const EngineIndex *ei);
extern bool engine_index_sinks_current(const EngineIndex *ei);
extern bool engine_attempt(EngineIndex *ei, const char *what,
						   void (*action) (void *arg), void *arg);
extern void engine_index_failed(EngineIndex *ei, const char *message);
extern void engine_forgive(EngineIndex *ei);
extern void engine_progressed(EngineIndex *ei);
extern void engine_needs_seed(EngineIndex *ei, bool needs_seed);
extern void engine_retry_rejected(EngineIndex *ei, XLogRecPtr version);
extern int64 engine_rebuild(EngineIndex *ei, const char *predicate, const char *ids,
							 char **failure);
extern long engine_turn_ms(void);

#endif							/* FLUSSO_ENGINE_ENGINE_H */

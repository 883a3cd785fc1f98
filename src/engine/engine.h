/*-------------------------------------------------------------------------
 *
 * engine.h
 *	  The bridge between what changed (cdc/) and what to build (document/),
 *	  and the only one: it turns a batch of thin changes into the documents
 *	  of every index, writes them through the sink seam, and gives the
 *	  seed the verbs it walks an index's rows with.  Engine and EngineIndex
 *	  are opaque outside src/engine/.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_ENGINE_ENGINE_H
#define FLUSSO_ENGINE_ENGINE_H

#include "cdc/batch.h"
#include "nodes/pg_list.h"
#include "store/catalog_signal.h"

typedef struct Engine Engine;			/* every index of the database */
typedef struct EngineIndex EngineIndex; /* one index, compiled */

/*
 * A row inserted into flusso.signal, as the stream delivered it, or a
 * table the stream says an index must be seeded again for (id NULL).
 */
typedef struct Signal
{
	char	   *id;
	char	   *kind;			/* SIGNAL_* */
	char	   *index_name;
	char	   *table;			/* rewrite, uncovered: schema.table */
	XLogRecPtr	lsn;			/* the commit that inserted the row */
} Signal;

/* documents built and written by one statement, at most */
#define ENGINE_BUILD_SLICE 20000

/* the worker's verbs (engine.c) */
extern Engine *engine_load(const char *publication);
extern bool engine_is_current(Engine *engine);
extern bool engine_index_sinks_current(const EngineIndex *ei);
extern List *engine_plugin_options(Engine *engine);
extern Oid	engine_signal_relid(Engine *engine);
extern void engine_report_phases(Engine *engine);
extern void engine_resolve_begin(Engine *engine, ChangeBatch *batch);
extern bool engine_resolve(Engine *engine, ChangeBatch *batch, MemoryContext signal_context,
						   List **signals);
extern bool engine_has_owed(Engine *engine);
extern int64 engine_owed_count(Engine *engine);
extern bool engine_build_owed(Engine *engine, int max_keys, int64 *written,
							  int64 *built);
extern bool engine_any_broken(Engine *engine);
extern bool engine_retry_broken(Engine *engine);
extern bool engine_ships(Engine *engine);

/* one index (engine.c) */
extern EngineIndex *engine_index(Engine *engine, const char *name);
extern EngineIndex *engine_next_to_seed(Engine *engine, EngineIndex *after);
extern const char *engine_index_name(const EngineIndex *ei);
extern const char *engine_index_version(const EngineIndex *ei);
extern bool engine_index_broken(const EngineIndex *ei);
extern bool engine_index_needs_seed(const EngineIndex *ei);
extern bool engine_attempt(EngineIndex *ei, const char *what,
						   void (*action) (void *arg), void *arg);
extern void engine_index_failed(EngineIndex *ei, const char *message);
extern void engine_forgive(EngineIndex *ei);
extern void engine_progressed(EngineIndex *ei);
extern void engine_retry_rejected(EngineIndex *ei, XLogRecPtr version);

/* the seed's verbs (seeding.c) */
extern const char *engine_root_table(const EngineIndex *ei);
extern int	engine_key_count(const EngineIndex *ei);
extern char *engine_unpublished_table(EngineIndex *ei, const char *publication);
extern char **engine_largest_key(EngineIndex *ei);
extern int64 engine_estimated_rows(EngineIndex *ei);
extern List *engine_read_keys(EngineIndex *ei, char **after, char **upto, int limit);
extern void engine_capture_begin(EngineIndex *ei, MemoryContext context);
extern List *engine_capture_end(EngineIndex *ei);
extern List *engine_keys_except(EngineIndex *ei, List *keys, List *except);
extern bool engine_build(EngineIndex *ei, List *keys, XLogRecPtr version, int64 *written);
extern void engine_write_next(EngineIndex *ei, bool next);
extern void engine_next_begin(EngineIndex *ei);
extern bool engine_next_exists(EngineIndex *ei);
extern bool engine_writes_next(const EngineIndex *ei);
extern void engine_next_swap(EngineIndex *ei);
extern void engine_needs_seed(EngineIndex *ei, bool needs_seed);

#endif							/* FLUSSO_ENGINE_ENGINE_H */

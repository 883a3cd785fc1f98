/*-------------------------------------------------------------------------
 *
 * engine_stream.h
 *	  The worker's verbs: compile every index of the database, turn a
 *	  batch of thin changes into the documents each index owes, and build
 *	  and write those through the sink seam.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_ENGINE_ENGINE_STREAM_H
#define FLUSSO_ENGINE_ENGINE_STREAM_H

#include "cdc/batch.h"
#include "engine/engine.h"
#include "store/catalog_signal.h"

/* documents built and written by one statement, at most */
#define ENGINE_BUILD_SLICE 20000

/* the indexes, compiled (engine.c) */
extern Engine *engine_load(const char *publication);
extern bool engine_is_current(Engine *engine);
extern List *engine_plugin_options(Engine *engine);
extern Oid	engine_signal_relid(Engine *engine);
extern void engine_report_phases(Engine *engine);
extern bool engine_any_broken(Engine *engine);
extern bool engine_retry_broken(Engine *engine);
extern bool engine_ships(Engine *engine);
extern List *engine_replaced_tables(Engine *engine);

/* a batch, resolved into the documents owed (apply.c) */
extern void engine_resolve_begin(Engine *engine, ChangeBatch *batch);
extern bool engine_resolve(Engine *engine, ChangeBatch *batch);

/* the documents owed, built (owed.c) */
extern bool engine_has_owed(Engine *engine);
extern int64 engine_owed_count(Engine *engine);
extern void engine_round_begin(Engine *engine);
extern bool engine_build_owed(Engine *engine, long turn_ms, int64 *written,
							  int64 *built, bool *turn_over);
extern void engine_publish_progress(Engine *engine, XLogRecPtr resolved);

/* What acting on a batch's signals leaves to the caller (signals.c). */
typedef struct SignalOutcome
{
	List	   *reseeded;		/* EngineIndex marked for seeding afresh */
	List	   *watermarks;		/* Signal: a seed's, for the seed to take */
	bool		recompile;		/* a table was rewritten or altered */
} SignalOutcome;

extern List *signal_read(Engine *engine, const ChangeBatch *batch);
extern void signal_act(Engine *engine, List *signals, SignalOutcome *outcome);

#endif							/* FLUSSO_ENGINE_ENGINE_STREAM_H */

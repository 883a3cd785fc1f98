/*-------------------------------------------------------------------------
 *
 * engine_index.h
 *	  What the engine holds of the database's indexes; seen only by the
 *	  files of src/engine/.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_ENGINE_ENGINE_INDEX_H
#define FLUSSO_ENGINE_ENGINE_INDEX_H

#include "datatype/timestamp.h"

#include "document/build.h"
#include "document/resolve.h"
#include "document/session.h"
#include "engine/engine.h"
#include "store/catalog_index.h"
#include "sink/sink.h"
#include "util/pace.h"

/*
 * The documents an index owes, in two sets: resolution adds to filling; a
 * build reads draining, which takes what filling holds once it is empty
 * (owed.c).  So an index's builds can go on over many of the worker's
 * turns while its new changes are resolved.  Each set says when it
 * started: every change of its documents was read past after, and the
 * oldest of them committed at since.
 */
typedef struct OwedDocuments
{
	struct PendingKeys *filling;
	struct PendingKeys *draining;
	bool		reading;		/* draining is being read */
	XLogRecPtr	filling_after;
	XLogRecPtr	draining_after;
	TimestampTz filling_since;
	TimestampTz draining_since;
} OwedDocuments;

struct EngineIndex
{
	StoredIndex *index;
	IndexSink  *sink;			/* where its documents go */
	DocumentQuery *query;
	IndexResolver *resolver;
	char	   *apply_sql[SINK_TARGETS];	/* writing to each SinkTarget */
	bool		next;			/* a seed runs: write to the next generation too */
	bool		needs_seed;		/* as flusso.index said when loaded */
	bool		broken;			/* could not compile or build: skipped */
	bool		set_aside;		/* the worker kept dying on it: not retried */
	bool		replaced;		/* a table it reads was seen replaced */
	List	   *reads;			/* TableUse: what it reads, and which columns */

	/*
	 * While capture is set, the keys every change resolves to are appended
	 * to captured (char ** rows of key parts), in capture_context.
	 */
	bool		capture;
	List	   *captured;
	MemoryContext capture_context;

	/* the documents its changes resolved to, not built yet */
	OwedDocuments owed;

	/*
	 * What building its documents costs lately, and how long its last turn
	 * at building what it owes lasted.
	 */
	BuildPace	pace;
	long		turn_ms;

	/*
	 * Queueing for OpenSearch only what the table sink changed, once it
	 * mirrors the table sink (sink/opensearch_sink.c): the served generation
	 * it was last seen to mirror it with (0: not seen so), the WAL's insert
	 * position then, and a position every change of the documents it owes
	 * was read past.
	 */
	int64		mirrored;
	XLogRecPtr	mirrored_from;
};

struct Engine
{
	List	   *indexes;		/* EngineIndex */
	char	   *signature;		/* names, versions, owners it was loaded for */
	List	   *plugin_options; /* DefElem: the columns each table must emit */
	Oid			signal_relid;	/* flusso.signal */
	bool		ships;			/* an index has an OpenSearch sink */
	XLogRecPtr	owed_version;	/* owed documents are built after it */

	/*
	 * A round of building what is owed: every index that owes documents
	 * has a turn, the cheapest first (owed.c).
	 */
	List	   *round;			/* EngineIndex still to have their turn */
	TimestampTz turn_began;		/* of the first in round; 0: not begun */
};

/* the seed's (engine/seed.c): which index, how big a chunk, its build */
extern EngineIndex *engine_next_to_seed(Engine *engine, EngineIndex *after);
extern int	engine_chunk_keys(const EngineIndex *ei, int limit, int shares);
extern bool engine_build(EngineIndex *ei, List *keys, XLogRecPtr version, int64 *written);

extern void engine_session_begin(EngineIndex *ei, BuildSession *session);
extern void engine_session_end(BuildSession *session);
extern int64 engine_write_slice(EngineIndex *ei, SinkTarget target, XLogRecPtr version,
								Datum **parts, Datum *ids, int n);
extern bool engine_index_owes(const EngineIndex *ei);
extern int64 engine_index_owed_count(const EngineIndex *ei);
extern TimestampTz engine_index_owed_since(const EngineIndex *ei);
extern XLogRecPtr engine_index_applied(const EngineIndex *ei, XLogRecPtr resolved);


#endif							/* FLUSSO_ENGINE_ENGINE_INDEX_H */

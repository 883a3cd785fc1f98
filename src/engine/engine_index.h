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

#include "document/build.h"
#include "document/resolve.h"
#include "document/session.h"
#include "engine/engine.h"
#include "store/catalog_index.h"
#include "sink/sink.h"

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
	struct PendingKeys *pending;

	/*
	 * Queueing for OpenSearch only what the table sink changed, once it
	 * mirrors the table sink (sink/opensearch_sink.c): the served generation
	 * it was last seen to mirror it with (0: not seen so), the WAL's insert
	 * position then, and a position every change of the documents it owes
	 * was read past.
	 */
	int64		mirrored;
	XLogRecPtr	mirrored_from;
	XLogRecPtr	owed_after;
};

struct Engine
{
	List	   *indexes;		/* EngineIndex */
	char	   *signature;		/* names, versions, owners it was loaded for */
	List	   *plugin_options; /* DefElem: the columns each table must emit */
	Oid			signal_relid;	/* flusso.signal */
	bool		ships;			/* an index has an OpenSearch sink */
	XLogRecPtr	owed_version;	/* owed documents are built after it */
	EngineIndex *building;		/* whose owed documents are being read */
};

extern void engine_session_begin(EngineIndex *ei, BuildSession *session);
extern void engine_session_end(BuildSession *session);
extern int64 engine_write_slice(EngineIndex *ei, SinkTarget target, XLogRecPtr version,
								Datum **parts, Datum *ids, int n);

#endif							/* FLUSSO_ENGINE_ENGINE_INDEX_H */

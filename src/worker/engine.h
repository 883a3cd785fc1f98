/*-------------------------------------------------------------------------
 *
 * engine.h
 *	  The bridge between what changed (cdc/) and what to build (document/):
 *	  turns a batch of thin changes into the documents of every index and
 *	  writes them to the table sink, and builds the chunks a seed reads.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_WORKER_ENGINE_H
#define FLUSSO_WORKER_ENGINE_H

#include "cdc/batch.h"
#include "document/build.h"
#include "document/resolve.h"
#include "index/definition.h"
#include "nodes/pg_list.h"

/* One index, compiled. */
typedef struct EngineIndex
{
	StoredIndex *index;
	DocumentQuery *query;
	IndexResolver *resolver;
	char	   *apply_sql[2];	/* writing to the documents, to the shadow */
	bool		shadow;			/* a seed runs: write to its shadow table */
	bool		needs_seed;		/* as flusso.index said when loaded */
	bool		broken;			/* could not compile or build: skipped */
	bool		set_aside;		/* the worker kept dying on it: not retried */
	List	   *reads;			/* TableUse: what it reads, and which columns */

	/*
	 * While capture is set, the keys every change resolves to are appended
	 * to captured (char ** rows of key parts), in capture_context.
	 */
	bool		capture;
	List	   *captured;
	MemoryContext capture_context;
} EngineIndex;

typedef struct Engine
{
	List	   *indexes;		/* EngineIndex */
	char	   *signature;		/* names and versions it was loaded for */
	List	   *plugin_options; /* DefElem: the columns each table must emit */
	Oid			signal_relid;	/* flusso.signal */
} Engine;

/* The kinds of signals: rows of flusso.signal ... */
#define SIGNAL_LOW "low"		/* a seed's chunk window opens */
#define SIGNAL_HIGH "high"		/* and closes */
#define SIGNAL_RESNAPSHOT "resnapshot"	/* flusso_resnapshot() */
/* ... and what the stream says of a table an index reads */
#define SIGNAL_REWRITE "rewrite"	/* ALTER TABLE rewrote it */
#define SIGNAL_UNCOVERED "uncovered"	/* it changed, unpublished */

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
} Signal;

extern Engine *engine_load(const char *publication);
extern char *engine_signature(void);
extern EngineIndex *engine_index(Engine *engine, const char *name);
extern int64 engine_apply(Engine *engine, ChangeBatch *batch, List **signals);
extern bool engine_build(EngineIndex *ei, List *keys, int64 *written);
extern bool engine_retry_broken(Engine *engine);
extern void engine_forgive(EngineIndex *ei);
extern void engine_progressed(EngineIndex *ei);
extern void engine_index_failed(EngineIndex *ei, const char *message);
extern bool engine_attempt(EngineIndex *ei, const char *what,
						   void (*action) (void *arg), void *arg);

#endif							/* FLUSSO_WORKER_ENGINE_H */

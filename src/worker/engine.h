/*-------------------------------------------------------------------------
 *
 * engine.h
 *	  The bridge between what changed (cdc/) and what to build (document/):
 *	  turns a batch of thin changes into the documents of every index and
 *	  writes them to the table sink.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_WORKER_ENGINE_H
#define FLUSSO_WORKER_ENGINE_H

#include "cdc/batch.h"
#include "nodes/pg_list.h"

typedef struct Engine
{
	List	   *indexes;		/* EngineIndex */
	char	   *signature;		/* names and versions it was loaded for */
	List	   *plugin_options; /* DefElem: the columns each table must emit */
} Engine;

extern Engine *engine_load(const char *publication);
extern char *engine_signature(void);
extern int64 engine_apply(Engine *engine, ChangeBatch *batch);

#endif							/* FLUSSO_WORKER_ENGINE_H */

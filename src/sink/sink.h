/*-------------------------------------------------------------------------
 *
 * sink.h
 *	  The seam through which documents leave flusso: every place that
 *	  stores an index's documents implements SinkOps, and the engine, the
 *	  seed and the SQL functions speak to an index's sinks through the
 *	  verbs below only.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SINK_SINK_H
#define FLUSSO_SINK_SINK_H

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "schema/schema.h"

/*
 * An index's documents as one sink stores them: the current generation,
 * which readers see, and the next one, which a seed fills and then swaps
 * in.  The statements that write documents are set-based: a sink adds
 * data-modifying CTEs that read the documents a CTE named "built" builds
 * (id, doc) and the ids of the parameter ids_param (text[]) that built
 * nothing, and return a row per document written or deleted.
 */
typedef struct SinkOps
{
	const char *name;
	/* storage for the current generation: is it there; create it */
	bool		(*exists) (const char *index);
	void		(*create) (const char *index, Oid owner);
	/* both generations, when the index is dropped */
	void		(*drop) (const char *index);
	/* "name AS (...)" CTEs, comma-separated, and their names in *ctes */
	void		(*write_ctes) (StringInfo sql, List **ctes, const char *index,
							   const IndexSchema *schema, bool next, int ids_param);
	/* every document gone (the root table was truncated) */
	void		(*truncate) (const char *index, bool next);
	/* a next generation, empty, replacing one left behind */
	void		(*next_begin) (const char *index, Oid owner);
	bool		(*next_exists) (const char *index);
	void		(*next_discard) (const char *index);
	/* the next generation becomes the current one, in one transaction */
	void		(*next_swap) (const char *index);
} SinkOps;

/* The sinks of one index. */
typedef struct IndexSink
{
	const char *index;			/* the index's name */
	Oid			owner;
	const IndexSchema *schema;	/* NULL: not needed to create or drop */
	List	   *ops;			/* const SinkOps * */
} IndexSink;

extern IndexSink *sink_for_index(const char *index, Oid owner, const IndexSchema *schema);
extern bool sink_missing(const IndexSink *sink);
extern void sink_create(const IndexSink *sink);
extern void sink_drop(const IndexSink *sink);
extern char *sink_write_sql(const IndexSink *sink, bool next, const char *build_sql,
							int ids_param);
extern void sink_truncate(const IndexSink *sink, bool next);
extern void sink_next_begin(const IndexSink *sink);
extern bool sink_next_exists(const IndexSink *sink);
extern void sink_next_discard(const IndexSink *sink);
extern void sink_next_swap(const IndexSink *sink);

#endif							/* FLUSSO_SINK_SINK_H */

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

#include "access/xlogdefs.h"
#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "schema/schema.h"

/*
 * An index's documents, as a sink stores them, come in generations: the
 * current one, which readers see, and while a seed runs the next one,
 * which the seed fills and then swaps in.  Live changes go to both, so
 * that readers never see frozen documents; a seed's chunks go to the next
 * one only.
 */
typedef enum SinkTarget
{
	SINK_CURRENT,				/* live changes, no seed running */
	SINK_CURRENT_AND_NEXT,		/* live changes while a seed runs */
	SINK_NEXT					/* a seed's chunk */
} SinkTarget;

#define SINK_TARGETS 3

/* The sinks of one index, as flusso.sink says. */
typedef struct IndexSink
{
	const char *index;			/* the index's name */
	Oid			owner;
	const IndexSchema *schema;	/* NULL: not needed to create or drop */
	List	   *ops;			/* const SinkOps * */
	bool		table;			/* has the table sink */
	char	   *server;			/* the OpenSearch sink's server, or NULL */
	char	   *options;		/* and its options (jsonb text) */
} IndexSink;

/*
 * What a sink does.  Documents reach a sink one of two ways: the table
 * sink adds data-modifying CTEs to the statement that builds them, which
 * read the documents a CTE named "built" builds (id, doc) and the ids of
 * parameter ids_param (text[]) that built nothing, and return the id of
 * each document written or deleted; the OpenSearch sink queues the ids with a
 * version, in the same transaction, and ships them later.  A sink leaves
 * the verb it does not use NULL.
 */
typedef struct SinkOps
{
	const char *name;
	/* storage for the current generation: is it there; create it */
	bool		(*exists) (const IndexSink *sink);
	void		(*create) (const IndexSink *sink);
	/* must the index be seeded for this sink to have documents? */
	bool		(*needs_seed) (const IndexSink *sink);
	/* every generation, when the index or the sink goes (keep: remotely) */
	void		(*drop) (const IndexSink *sink, bool keep);
	void		(*write_ctes) (StringInfo sql, List **ctes, const IndexSink *sink,
							   SinkTarget target, int ids_param);
	int64		(*queue) (const IndexSink *sink, SinkTarget target, Datum ids,
						  XLogRecPtr version);
	/* every document gone (the root table was truncated) */
	void		(*truncate) (const IndexSink *sink, SinkTarget target, XLogRecPtr version);
	/* a next generation, empty, replacing one left behind */
	void		(*next_begin) (const IndexSink *sink);
	bool		(*next_exists) (const IndexSink *sink);
	void		(*next_discard) (const IndexSink *sink);
	/* the next generation becomes the current one, in one transaction */
	void		(*next_swap) (const IndexSink *sink);
	/* documents rejected for good: queue them again */
	void		(*retry_rejected) (const IndexSink *sink, XLogRecPtr version);
} SinkOps;

extern IndexSink *sink_for_index(const char *index, Oid owner, const IndexSchema *schema);
extern bool sink_set(const char *index, Oid owner, bool table, const char *server,
					 const char *options);
extern char *sink_signature_sql(const char *index_column);
extern bool sink_missing(const IndexSink *sink);
extern bool sink_same(const IndexSink *a, const IndexSink *b);
extern void sink_create(const IndexSink *sink);
extern bool sink_needs_seed(const IndexSink *sink);
extern void sink_drop(const IndexSink *sink, bool keep);
extern void sink_forget(const char *index);
extern char *sink_write_sql(const IndexSink *sink, SinkTarget target, const char *build_sql,
							int ids_param);
extern int64 sink_queue(const IndexSink *sink, SinkTarget target, Datum ids,
						XLogRecPtr version);
extern void sink_truncate(const IndexSink *sink, SinkTarget target, XLogRecPtr version);
extern void sink_next_begin(const IndexSink *sink);
extern bool sink_next_exists(const IndexSink *sink);
extern void sink_next_discard(const IndexSink *sink);
extern void sink_next_swap(const IndexSink *sink);
extern void sink_retry_rejected(const IndexSink *sink, XLogRecPtr version);
extern int64 sink_mirrored(const IndexSink *sink);

#endif							/* FLUSSO_SINK_SINK_H */

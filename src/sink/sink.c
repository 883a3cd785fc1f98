/*-------------------------------------------------------------------------
 *
 * sink.c
 *	  The verbs over an index's sinks: each is carried out by every sink
 *	  the index writes to, so that a new sink is a new SinkOps, and nothing
 *	  that writes documents changes when it arrives.
 *
 * The write statement builds the documents once (the CTE "built") and
 * hands them to every sink in the same statement, as data-modifying CTEs
 * that run with the caller's transaction: documents written and pending
 * shipments recorded commit together, before the slot is confirmed.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "sink/sink.h"
#include "sink/table_sink.h"

/* The sinks index writes to.  Only the embedded table sink, for now. */
IndexSink *
sink_for_index(const char *index, Oid owner, const IndexSchema *schema)
{
	IndexSink  *sink = palloc0(sizeof(IndexSink));

	sink->index = pstrdup(index);
	sink->owner = owner;
	sink->schema = schema;
	sink->ops = list_make1((void *) &table_sink_ops);
	return sink;
}

/* Does a sink lack storage for the current generation? */
bool
sink_missing(const IndexSink *sink)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
	{
		if (!((const SinkOps *) lfirst(lc))->exists(sink->index))
			return true;
	}
	return false;
}

/* Storage for the current generation, in every sink that lacks it. */
void
sink_create(const IndexSink *sink)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
		((const SinkOps *) lfirst(lc))->create(sink->index, sink->owner);
}

void
sink_drop(const IndexSink *sink)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
		((const SinkOps *) lfirst(lc))->drop(sink->index);
}

/*
 * The statement that builds the documents of the keys at hand with
 * build_sql (which takes the first parameters), writes them to every sink
 * (to the next generation with next), deletes those of the ids in
 * $ids_param that built nothing, and returns how many it wrote and
 * deleted.
 */
char *
sink_write_sql(const IndexSink *sink, bool next, const char *build_sql, int ids_param)
{
	StringInfoData sql;
	List	   *ctes = NIL;
	ListCell   *lc;

	initStringInfo(&sql);
	appendStringInfo(&sql, "WITH built AS (%s)", build_sql);
	foreach(lc, sink->ops)
		((const SinkOps *) lfirst(lc))->write_ctes(&sql, &ctes, sink->index, sink->schema,
												   next, ids_param);
	appendStringInfoString(&sql, " SELECT 0");
	foreach(lc, ctes)
		appendStringInfo(&sql, " OPERATOR(pg_catalog.+) (SELECT pg_catalog.count(*) FROM %s)",
						 (char *) lfirst(lc));
	return sql.data;
}

void
sink_truncate(const IndexSink *sink, bool next)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
		((const SinkOps *) lfirst(lc))->truncate(sink->index, next);
}

void
sink_next_begin(const IndexSink *sink)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
		((const SinkOps *) lfirst(lc))->next_begin(sink->index, sink->owner);
}

/* Does every sink have a next generation (a seed to resume)? */
bool
sink_next_exists(const IndexSink *sink)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
	{
		if (!((const SinkOps *) lfirst(lc))->next_exists(sink->index))
			return false;
	}
	return true;
}

void
sink_next_discard(const IndexSink *sink)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
		((const SinkOps *) lfirst(lc))->next_discard(sink->index);
}

void
sink_next_swap(const IndexSink *sink)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
		((const SinkOps *) lfirst(lc))->next_swap(sink->index);
}

/*-------------------------------------------------------------------------
 *
 * sink.c
 *	  The sinks of an index, as flusso.sink says (the table sink alone when
 *	  it says nothing), and the verbs over them: each is carried out by
 *	  every sink the index writes to, so that a new sink is a new SinkOps,
 *	  and nothing that writes documents changes when it arrives.
 *
 * The write statement builds the documents once (the CTE "built") and
 * hands them to the table sink in the same statement, as data-modifying
 * CTEs; the OpenSearch sink queues the ids in the same transaction.  So
 * documents written and shipments queued commit together, before the
 * slot is confirmed.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "catalog/namespace.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "util/pinned.h"
#include "util/spi_run.h"
#include "store/catalog_sink.h"
#include "settings.h"
#include "sink/opensearch_sink.h"
#include "sink/sink.h"
#include "sink/table_sink.h"

/*
 * Is flusso.sink there?  Not while the SQL objects are older than the
 * library (0.2.0, before ALTER EXTENSION UPDATE): every index has the
 * table sink alone then.
 */
static bool
sinks_recorded(void)
{
	return OidIsValid(get_relname_relid("sink", get_namespace_oid(FLUSSO_SCHEMA, false)));
}

/* The sinks index writes to: flusso.sink's rows, or the table sink. */
IndexSink *
sink_for_index(const char *index, Oid owner, const IndexSchema *schema)
{
	IndexSink  *sink = palloc0(sizeof(IndexSink));
	CatalogUser saved;
	List	   *rows;
	ListCell   *lc;

	sink->index = pstrdup(index);
	sink->owner = owner;
	sink->schema = schema;
	if (!sinks_recorded())
	{
		sink->table = true;
		sink->ops = list_make1((void *) &table_sink_ops);
		return sink;
	}

	catalog_become_owner(&saved);
	rows = catalog_read_sinks(index);
	catalog_restore_user(&saved);
	sink->table = rows == NIL;
	foreach(lc, rows)
	{
		SinkRow    *row = lfirst(lc);

		if (strcmp(row->sink, "table") == 0)
			sink->table = true;
		else
		{
			sink->server = row->server_name;
			sink->options = row->options;
		}
	}
	if (sink->table)
		sink->ops = lappend(sink->ops, (void *) &table_sink_ops);
	if (sink->server)
		sink->ops = lappend(sink->ops, (void *) &opensearch_sink_ops);
	return sink;
}

/*
 * Do two sets of OpenSearch options build the same OpenSearch index?  They
 * may differ in what OpenSearch applies to a live index (replicas,
 * refresh_interval) and in on_error, the shipper's.
 */
static bool
same_index_options(const char *a, const char *b)
{
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(a), CStringGetTextDatum(b)};

	return spi_read("SELECT 1 WHERE ($1::pg_catalog.jsonb OPERATOR(pg_catalog.-) "
					"'{on_error,replicas,refresh_interval}'::pg_catalog.text[]) "
					"OPERATOR(pg_catalog.=) ($2::pg_catalog.jsonb OPERATOR(pg_catalog.-) "
					"'{on_error,replicas,refresh_interval}'::pg_catalog.text[])",
					2, types, values, true, 1, NULL, NULL) > 0;
}

/*
 * Make the sinks of index what the caller says (table; server, with
 * options, or NULL): a sink removed is dropped (an OpenSearch one's
 * indexes retired; the documents table, which the index lives as long as,
 * emptied), a sink added created.  True when the index must be
 * seeded for the sinks to have every document: a sink was added, or the
 * OpenSearch index would be built differently (its shards); OpenSearch
 * options it applies to a live index change the index's generations in
 * place.  In the caller's transaction.
 */
bool
sink_set(const char *index, Oid owner, bool table, const char *server, const char *options)
{
	IndexSink  *old = sink_for_index(index, owner, NULL);
	IndexSink	new = {index, owner, NULL, NIL, table, (char *) server, (char *) options};
	bool		same_server = old->server && server && strcmp(old->server, server) == 0;
	bool		seed = false;
	CatalogUser saved;

	if (old->table && !table)
		table_sink_empty(old);
	if (!old->table && table)
	{
		table_sink_ops.create(&new);
		seed = true;
	}
	if (old->server && !same_server)
		opensearch_sink_ops.drop(old, false);
	if (server && !(same_server && same_index_options(old->options, options)))
		seed = true;
	else if (server && old->options && strcmp(old->options, options) != 0)
		opensearch_sink_set_options(&new);

	catalog_become_owner(&saved);
	catalog_replace_sinks(index, table, server, options);
	catalog_restore_user(&saved);
	return seed;
}

/* Do a and b name the same sinks, with the same options? */
bool
sink_same(const IndexSink *a, const IndexSink *b)
{
	if (a->table != b->table || (a->server == NULL) != (b->server == NULL) ||
		(a->options == NULL) != (b->options == NULL))
		return false;
	return (a->server == NULL || strcmp(a->server, b->server) == 0) &&
		(a->options == NULL || strcmp(a->options, b->options) == 0);
}

/*
 * An expression of the sinks of the index named by index_column, for the
 * engine's signature: a change of sinks compiles the indexes again.
 */
char *
sink_signature_sql(const char *index_column)
{
	if (!sinks_recorded())
		return pstrdup("NULL");
	return catalog_sinks_signature_sql(index_column);
}

/* Does a sink lack storage for the current generation? */
bool
sink_missing(const IndexSink *sink)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
	{
		if (!((const SinkOps *) lfirst(lc))->exists(sink))
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
		((const SinkOps *) lfirst(lc))->create(sink);
}

/* Does a sink have no documents unless the index is seeded? */
bool
sink_needs_seed(const IndexSink *sink)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
	{
		if (((const SinkOps *) lfirst(lc))->needs_seed(sink))
			return true;
	}
	return false;
}

/*
 * Every sink drops the index's documents; the documents table goes too
 * when the table sink is off (it was kept, empty, for the index to live
 * as long as it).
 */
void
sink_drop(const IndexSink *sink, bool keep)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
		((const SinkOps *) lfirst(lc))->drop(sink, keep);
	if (!sink->table)
		table_sink_ops.drop(sink, keep);
}

/* The index is dropped: forget its sinks, once each has dropped its part. */
void
sink_forget(const char *index)
{
	CatalogUser saved;

	if (!sinks_recorded())
		return;
	catalog_become_owner(&saved);
	catalog_forget_sinks(index);
	catalog_restore_user(&saved);
}

/*
 * The statement that builds the documents of the keys at hand with
 * build_sql (which takes the first parameters), writes them to the sinks
 * that take documents in the statement, in the generations target names,
 * deletes those of the ids in $ids_param that built nothing, and returns
 * how many it wrote and deleted, and, written to the current generation
 * only by a sink that ships later too, the ids of the documents it
 * changed (text[], NULL for none): while OpenSearch mirrors the table
 * sink, those are the ones to queue (sink/opensearch_sink.c).
 */
char *
sink_write_sql(const IndexSink *sink, SinkTarget target, const char *build_sql, int ids_param)
{
	StringInfoData sql;
	List	   *ctes = NIL;
	ListCell   *lc;

	initStringInfo(&sql);
	appendStringInfo(&sql, "WITH built AS (%s)", build_sql);
	foreach(lc, sink->ops)
	{
		const SinkOps *ops = lfirst(lc);

		if (ops->write_ctes)
			ops->write_ctes(&sql, &ctes, sink, target, ids_param);
	}
	appendStringInfoString(&sql, " SELECT 0::pg_catalog.int8");
	foreach(lc, ctes)
		appendStringInfo(&sql, " OPERATOR(pg_catalog.+) (SELECT pg_catalog.count(*) FROM %s)",
						 (char *) lfirst(lc));
	if (target == SINK_CURRENT && sink->table && sink->server && ctes != NIL)
	{
		appendStringInfoString(&sql, ", (SELECT pg_catalog.array_agg(c.id) FROM (");
		foreach(lc, ctes)
			appendStringInfo(&sql, "%sSELECT id FROM %s",
							 foreach_current_index(lc) > 0 ? " UNION ALL " : "",
							 (char *) lfirst(lc));
		appendStringInfoString(&sql, ") c)");
	}
	else
		appendStringInfoString(&sql, ", NULL::pg_catalog.text[]");
	return sql.data;
}

/*
 * Queue ids (text[]) for the sinks that ship later, with the version they
 * ship with; returns how many were queued.
 */
int64
sink_queue(const IndexSink *sink, SinkTarget target, Datum ids, XLogRecPtr version)
{
	int64		queued = 0;
	ListCell   *lc;

	foreach(lc, sink->ops)
	{
		const SinkOps *ops = lfirst(lc);

		if (ops->queue)
			queued += ops->queue(sink, target, ids, version);
	}
	return queued;
}

void
sink_truncate(const IndexSink *sink, SinkTarget target, XLogRecPtr version)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
		((const SinkOps *) lfirst(lc))->truncate(sink, target, version);
}

void
sink_next_begin(const IndexSink *sink)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
		((const SinkOps *) lfirst(lc))->next_begin(sink);
}

/* Does every sink have a next generation (a seed to resume)? */
bool
sink_next_exists(const IndexSink *sink)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
	{
		if (!((const SinkOps *) lfirst(lc))->next_exists(sink))
			return false;
	}
	return true;
}

void
sink_next_discard(const IndexSink *sink)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
		((const SinkOps *) lfirst(lc))->next_discard(sink);
}

void
sink_next_swap(const IndexSink *sink)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
		((const SinkOps *) lfirst(lc))->next_swap(sink);
}

void
sink_retry_rejected(const IndexSink *sink, XLogRecPtr version)
{
	ListCell   *lc;

	foreach(lc, sink->ops)
	{
		const SinkOps *ops = lfirst(lc);

		if (ops->retry_rejected)
			ops->retry_rejected(sink, version);
	}
}

/*
 * Does OpenSearch mirror the table sink (sink/opensearch_sink.c)?  The
 * generation it serves, or 0.
 */
int64
sink_mirrored(const IndexSink *sink)
{
	if (!sink->table || sink->server == NULL)
		return 0;
	return opensearch_sink_mirrored(sink);
}

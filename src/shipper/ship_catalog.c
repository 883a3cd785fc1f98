/*-------------------------------------------------------------------------
 *
 * ship_catalog.c
 *	  What the shipper reads of flusso's catalog at the start of a pass: the
 *	  indexes with an OpenSearch sink, and every generation, live or
 *	  retired, with what its steps send (the body that creates it, the
 *	  settings it is served with) and the server it lives on, with the
 *	  credentials of the index's owner.  And what it reports of each index
 *	  in shared memory.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "ipc/shared.h"
#include "util/xact.h"
#include "store/catalog_index.h"
#include "opensearch/api.h"
#include "schema/schema.h"
#include "shipper/shipper.h"

static ShipIndex *
find_index(List *indexes, const char *name)
{
	ListCell   *lc;

	foreach(lc, indexes)
	{
		ShipIndex  *x = lfirst(lc);

		if (strcmp(x->name, name) == 0)
			return x;
	}
	return NULL;
}

static char *
column_text(int row, int column)
{
	return SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, column);
}

static Datum
column(int row, int column, bool *isnull)
{
	return SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, column, isnull);
}

/* The indexes whose sinks include OpenSearch, in name order. */
static List *
load_indexes(MemoryContext context)
{
	MemoryContext old = MemoryContextSwitchTo(context);
	List	   *rows = catalog_opensearch_indexes();
	List	   *indexes = NIL;
	ListCell   *lc;

	foreach(lc, rows)
	{
		OpenSearchIndexRow *row = lfirst(lc);
		ShipIndex  *x = palloc0(sizeof(ShipIndex));

		x->name = row->name;
		x->live = true;
		x->owner = row->owner;
		x->server_name = row->server_name;
		x->on_error = row->on_error;
		x->stopped = row->stopped;
		x->owner_name = row->owner_name;
		indexes = lappend(indexes, x);
	}
	MemoryContextSwitchTo(old);
	return indexes;
}

/*
 * Every generation, attached to its index (an index dropped since has its
 * generations only, to retire).  A seeded generation is drained once no
 * document queued before its seed ended waits; and it may lack every
 * document of its index rejected since it was created (a rejected row
 * leaves the outbox, whichever of its items was refused).
 */
static List *
load_generations(List *indexes, MemoryContext context)
{
	if (SPI_execute("SELECT g.generation, g.index_name, g.server_name, g.owner::pg_catalog.oid, "
					"g.alias, g.concrete, g.state, g.created, g.keep, "
					"COALESCE(g.seeded_version, -1), COALESCE(g.truncate_version, -1), "
					"(g.settings OPERATOR(pg_catalog.->>) 'shards')::pg_catalog.int4, "
					"pg_catalog.jsonb_build_object('index', pg_catalog.jsonb_build_object("
					"'number_of_replicas', (g.settings OPERATOR(pg_catalog.->>) 'replicas')::pg_catalog.int4, "
					"'refresh_interval', g.settings OPERATOR(pg_catalog.->>) 'refresh_interval'))::pg_catalog.text, "
					"NOT EXISTS (SELECT 1 FROM flusso.outbox o "
					"WHERE o.index_name OPERATOR(pg_catalog.=) g.index_name "
					"AND o.version OPERATOR(pg_catalog.<=) g.seeded_version), "
					"(SELECT pg_catalog.count(*) FROM flusso.rejected r "
					"WHERE r.index_name OPERATOR(pg_catalog.=) g.index_name "
					"AND r.rejected_at OPERATOR(pg_catalog.>=) g.created_at) "
					"FROM flusso.opensearch_generation g ORDER BY g.generation",
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read flusso.opensearch_generation");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		MemoryContext old = MemoryContextSwitchTo(context);
		ShipGeneration *g = palloc0(sizeof(ShipGeneration));
		ShipIndex  *x;
		bool		isnull;
		char	   *server_name;
		Oid			owner;

		g->generation = DatumGetInt64(column(i, 1, &isnull));
		g->index_name = column_text(i, 2);
		server_name = column_text(i, 3);
		owner = DatumGetObjectId(column(i, 4, &isnull));
		g->alias = column_text(i, 5);
		g->concrete = column_text(i, 6);
		g->state = column_text(i, 7);
		g->created = DatumGetBool(column(i, 8, &isnull));
		g->keep = DatumGetBool(column(i, 9, &isnull));
		g->seeded_version = DatumGetInt64(column(i, 10, &isnull));
		g->truncate_version = DatumGetInt64(column(i, 11, &isnull));
		g->create_body = column_text(i, 12);	/* shards, for now */
		g->live_settings = column_text(i, 13);
		g->server = os_server_load(server_name, owner, true);

		g->drained = DatumGetBool(column(i, 14, &isnull));
		g->rejected = DatumGetInt64(column(i, 15, &isnull));

		x = find_index(indexes, g->index_name);
		if (x == NULL)
		{
			/* dropped, or its sink removed: only retiring is left */
			x = palloc0(sizeof(ShipIndex));
			x->name = g->index_name;
			x->owner = owner;
			indexes = lappend(indexes, x);
		}
		x->generations = lappend(x->generations, g);
		MemoryContextSwitchTo(old);
	}
	return indexes;
}

/*
 * What the catalog says now, in a transaction of its own, into the
 * current memory context.  False when flusso is no longer installed.
 */
bool
ship_load(List **indexes)
{
	MemoryContext context = CurrentMemoryContext;
	ListCell   *lc;

	if (!xact_begin(true, NULL, 0))
		return false;
	SPI_connect();
	*indexes = load_indexes(context);
	*indexes = load_generations(*indexes, context);
	foreach(lc, *indexes)
	{
		ShipIndex  *x = lfirst(lc);
		char	   *mapping = NULL;
		ListCell   *gc;

		if (x->live)
		{
			MemoryContext old = MemoryContextSwitchTo(context);

			x->server = os_server_load(x->server_name, x->owner, true);
			x->usable = os_server_usable_by(x->server_name, x->owner);
			MemoryContextSwitchTo(old);
		}
		foreach(gc, x->generations)
		{
			ShipGeneration *g = lfirst(gc);
			char	   *body;

			if (g->created || !ship_generation_active(g) || !x->live)
				continue;
			if (mapping == NULL)
				mapping = schema_mapping_json(catalog_load_index(x->name)->schema);
			/* a seed writes with refresh off and no replicas, restored when served */
			body = os_index_body(mapping, atoi(g->create_body), 0, "-1");
			g->create_body = MemoryContextStrdup(context, body);
		}
	}
	SPI_finish();
	xact_commit();
	return true;
}

/* The shipping figures of an index in flusso_status(), under the lock. */
static IndexStatus *
status_of(const char *index)
{
	DatabaseEntry *entry = shared_database(MyDatabaseId, false);

	return entry ? shared_index_status(entry, index) : NULL;
}

/*
 * A step failed: flusso_status() shows why, to any flusso_admin member,
 * so the message names the server, the request and OpenSearch's error
 * type, never a value.
 */
void
ship_record_error(const char *index, const char *message)
{
	IndexStatus *status;

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	status = status_of(index);
	if (status)
	{
		strlcpy(status->ship_error, message, FLUSSO_ERROR_LEN);
		status->ship_error_at = GetCurrentTimestamp();
	}
	LWLockRelease(flusso_shared->lock);
}

void
ship_record_shipped(const char *index, int64 shipped)
{
	IndexStatus *status;

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	status = status_of(index);
	if (status)
	{
		status->shipped += shipped;
		rate_note(&status->ship_rate, GetCurrentTimestamp(), status->shipped);
	}
	LWLockRelease(flusso_shared->lock);
}

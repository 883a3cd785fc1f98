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

#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "ipc/shared.h"
#include "util/xact.h"
#include "store/catalog_index.h"
#include "store/catalog_opensearch_generation.h"
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
	MemoryContext old = MemoryContextSwitchTo(context);
	ListCell   *lc;

	foreach(lc, generation_load_all())
	{
		GenerationRow *row = lfirst(lc);
		ShipGeneration *g = palloc0(sizeof(ShipGeneration));
		ShipIndex  *x;

		g->generation = row->generation;
		g->index_name = row->index_name;
		g->alias = row->alias;
		g->concrete = row->concrete;
		g->state = row->state;
		g->created = row->created;
		g->keep = row->keep;
		g->seeded_version = row->seeded_version;
		g->truncate_version = row->truncate_version;
		g->create_body = row->create_body;	/* shards, for now */
		g->live_settings = row->live_settings;
		g->server = os_server_load(row->server_name, row->owner, true);

		g->drained = row->drained;
		g->rejected = row->rejected;

		x = find_index(indexes, g->index_name);
		if (x == NULL)
		{
			/* dropped, or its sink removed: only retiring is left */
			x = palloc0(sizeof(ShipIndex));
			x->name = g->index_name;
			x->owner = row->owner;
			indexes = lappend(indexes, x);
		}
		x->generations = lappend(x->generations, g);
	}
	MemoryContextSwitchTo(old);
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

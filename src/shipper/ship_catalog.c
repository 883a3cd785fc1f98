/*-------------------------------------------------------------------------
 *
 * ship_catalog.c
 *	  What the shipper reads of flusso's catalog at the start of a pass: the
 *	  indexes with an OpenSearch sink, and every generation, live or
 *	  retired, with what its steps send (the body that creates it, the
 *	  settings it is served with) and the server it lives on, with the
 *	  credentials of the index's owner; the build statement of each index,
 *	  compiled from its stored definition when a bulk first needs it; and
 *	  the database's identity, which every index it creates records as its
 *	  owner (source/source.c).  And what it reports of each index in shared
 *	  memory.
 *
 * While the database is a copy the worker has not taken in yet (it has no
 * identity of its own, another database's is in the catalog), a pass
 * reads no index at all: the generations in the catalog are the other
 * database's, and nothing is done in OpenSearch until the worker has
 * made the identity this database's own.
 *
 * What a pass read is kept, in a memory context of its own, and given to
 * the passes that follow without reading the catalog again, as long as
 * all of these hold (else the next pass reads it again):
 *
 *	  - every generation is steady (served, created, nothing to empty) and
 *		every index has its sink: a generation on its way changes with
 *		the outbox (drained) and the rejected rows, which the catalog's
 *		change count does not see, so such a pass reads them as before;
 *	  - the change count (below) has not moved since just before it was
 *		read: no commit changed flusso's tables (the SQL functions,
 *		the worker's sink verbs and owners), and no invalidation came for
 *		a table, column, privilege, server, user mapping, role, schema,
 *		function or type;
 *	  - the shipper changed nothing itself: a step it recorded in
 *		flusso.opensearch_generation, shipping it stopped, a generation a
 *		bulk names that it did not read (ShipStatus.reread);
 *	  - the configuration was not reloaded, and it was read less than
 *		SHIP_CATALOG_MAX_AGE_MS ago (a backstop).
 *
 * A bulk checks the count again before it reads rows (ship_catalog_holds()):
 * a change made during a turn ends the turn, so that no bulk is built with
 * a build statement older than the change it commits after.  The build
 * statements run as the owner with the privileges of the moment, whatever
 * is kept: privileges are checked when they run.
 *
 * The change count grows whenever what the shipper keeps may have
 * changed, in two ways, as the worker's does (worker/catalog_watch.c).
 * flusso's own tables change
 * through flusso's SQL functions, the worker's sink verbs (a generation
 * begun, seeded, truncated or retired, shipping resumed) and the owners
 * it follows, and each such commit is counted in the database's shared
 * memory (ipc/requests.c), after it is visible.  PostgreSQL's catalogs
 * change through DDL, whose invalidation messages ipc/change_count.c
 * counts: a relcache one for every change of a table, its columns or its
 * privileges; and the syscaches of what the shipper reads besides: the
 * foreign servers, their wrappers and user mappings (a server's options,
 * its credentials, USAGE granted or revoked), roles and memberships, and
 * the schemas, functions and types a build statement names.  More counts
 * than changes cost one catalog read each; the shipper's own steps
 * neither send invalidations nor need to: they say so in what a turn came
 * to (ShipStatus), and the loop drops what it keeps once the turn ends
 * (ship_catalog_forget()).
 *
 * Another backend's invalidations reach this process when it reads the
 * shared invalidation queue: change_count() reads it, which costs the
 * test of a flag when it is empty.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "ipc/change_count.h"
#include "ipc/shared.h"
#include "util/xact.h"
#include "store/catalog_index.h"
#include "store/catalog_opensearch_generation.h"
#include "opensearch/api.h"
#include "document/build.h"
#include "schema/schema.h"
#include "shipper/ship_catalog.h"
#include "source/source.h"

/*
 * A pass that finds nothing changed since the last read is given what it
 * read then, at most this long: a backstop, for a change nothing counted.
 */
#define SHIP_CATALOG_MAX_AGE_MS 10000

/* What the last read found, and when. */
static struct
{
	MemoryContext context;		/* NULL: nothing read yet */
	List	   *indexes;		/* ShipIndex, in context */
	bool		steady;			/* it holds until a change is counted */
	DatabaseEntry *entry;
	uint64		count;			/* change_count() before it was read */
	TimestampTz loaded_at;
	SourceIdentity identity;	/* id NULL: a catalog before 0.7.0 */
	char	   *owner_record;	/* the identity, as OpenSearch indexes record it */
}			kept;

/* Count invalidations from now on; once per process. */
void
ship_watch_start(void)
{
	static const int caches[] = {
		FOREIGNSERVEROID, FOREIGNDATAWRAPPEROID, USERMAPPINGOID,
		USERMAPPINGUSERSERVER, AUTHOID, AUTHMEMMEMROLE,
		NAMESPACEOID, PROCOID, TYPEOID
	};

	change_count_watch(caches, lengthof(caches));
}

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
		x->conflict = row->conflict;
		x->take_alias = row->take_alias;
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

		g->row = *row;
		g->server = os_server_load(row->server_name, row->owner, true);

		x = find_index(indexes, row->index_name);
		if (x == NULL)
		{
			/* dropped, or its sink removed: only retiring is left */
			x = palloc0(sizeof(ShipIndex));
			x->name = row->index_name;
			x->owner = row->owner;
			indexes = lappend(indexes, x);
		}
		x->generations = lappend(x->generations, g);
	}
	MemoryContextSwitchTo(old);
	return indexes;
}

/* The database's identity, and the owner record it makes, into context. */
static void
load_identity(MemoryContext context, SourceIdentity *identity, char **owner_record)
{
	MemoryContext old = MemoryContextSwitchTo(context);

	(void) source_look(identity);
	*owner_record = identity->id ? source_meta_json(identity) : NULL;
	MemoryContextSwitchTo(old);
}

/*
 * Read what the catalog says now, in a transaction of its own, into
 * context: the identity (and the owner record it makes), and the indexes.
 * False when flusso is no longer installed.
 */
static bool
load(MemoryContext context, List **indexes, SourceIdentity *identity, char **owner_record)
{
	ListCell   *lc;

	if (!xact_begin(true, NULL, 0))
		return false;
	SPI_connect();
	load_identity(context, identity, owner_record);
	if (identity->unclaimed)
	{
		/* a copy, until the worker takes it in: nothing is this database's */
		*indexes = NIL;
		SPI_finish();
		xact_commit();
		return true;
	}
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

			if ((g->row.created && !g->row.remap) || !ship_generation_active(g) || !x->live)
				continue;
			if (mapping == NULL)
			{
				mapping = schema_mapping_json(catalog_load_index(x->name)->schema);
				x->mapping = MemoryContextStrdup(context, mapping);
			}
			if (g->row.created)
				continue;
			/* a seed writes with refresh off and no replicas, restored when served */
			body = os_index_body(mapping, atoi(g->row.create_body), 0, "-1", *owner_record);
			g->row.create_body = MemoryContextStrdup(context, body);
		}
	}
	SPI_finish();
	xact_commit();
	return true;
}

/*
 * Is every generation where it stays until something else happens: served
 * and created, with nothing to empty, and every index live?  Then nothing
 * read of the outbox (drained) or of the rejected (rejected) matters, and
 * what was read holds until the catalog changes.
 */
static bool
steady(List *indexes)
{
	ListCell   *lc;

	foreach(lc, indexes)
	{
		ShipIndex  *x = lfirst(lc);
		ListCell   *gc;

		if (!x->live || x->generations == NIL)
			return false;
		foreach(gc, x->generations)
		{
			ShipGeneration *g = lfirst(gc);

			if (!g->row.created || g->row.state != GENERATION_SERVED ||
				g->row.truncate_version >= 0)
				return false;
		}
	}
	return true;
}

/*
 * What the catalog says now: what was read last, when it still holds (see
 * the header), else read again.  It lives in a memory context of its own
 * until it is read again.  False when flusso is no longer installed.
 */
bool
ship_load(DatabaseEntry *entry, List **indexes)
{
	uint64		count = change_count(entry);
	TimestampTz now = GetCurrentTimestamp();
	MemoryContext context;
	List	   *loaded;
	SourceIdentity identity;
	char	   *owner_record;

	if (kept.context != NULL && kept.steady && count == kept.count &&
		!TimestampDifferenceExceeds(kept.loaded_at, now, SHIP_CATALOG_MAX_AGE_MS))
	{
		*indexes = kept.indexes;
		return true;
	}
	context = AllocSetContextCreate(TopMemoryContext, "flusso shipper catalog",
									ALLOCSET_SMALL_SIZES);
	if (!load(context, &loaded, &identity, &owner_record))
	{
		MemoryContextDelete(context);
		return false;
	}
	if (kept.context != NULL)
		MemoryContextDelete(kept.context);
	kept.context = context;
	kept.indexes = loaded;
	kept.entry = entry;
	kept.count = count;
	kept.loaded_at = now;
	kept.steady = steady(loaded) && identity.unclaimed == NULL;
	kept.identity = identity;
	kept.owner_record = owner_record;
	*indexes = loaded;
	return true;
}

/*
 * The identity of this database as the last pass read it: id NULL before
 * ALTER EXTENSION UPDATE to 0.7.0, when OpenSearch indexes record no
 * owner.  And the owner record its indexes carry.
 */
const SourceIdentity *
ship_identity(const char **owner_record)
{
	if (owner_record)
		*owner_record = kept.owner_record;
	return &kept.identity;
}

/*
 * The shipper changed the catalog itself (a step recorded, shipping
 * stopped), or found it changed: read it again at the next pass.
 */
void
ship_catalog_forget(void)
{
	kept.steady = false;
}

/*
 * Does what the pass read still hold?  False once the catalog may have
 * changed since (or the shipper forgot it): the pass then ends its turns,
 * for the next to read it again.
 */
bool
ship_catalog_holds(void)
{
	return kept.context != NULL && change_count(kept.entry) == kept.count;
}

/*
 * The build statement of x, compiled from its stored definition the first
 * time a pass that read it needs it, in the current transaction, and kept
 * with what the pass read (in a context of x's own, emptied when an error
 * interrupted the compiling).
 */
const DocumentQuery *
ship_build_query(ShipIndex *x)
{
	MemoryContext old;

	if (x->query != NULL)
		return x->query;
	if (x->query_context == NULL)
		x->query_context = AllocSetContextCreate(kept.context, "flusso shipper build statement",
												 ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(x->query_context);
	old = MemoryContextSwitchTo(x->query_context);
	x->query = doc_build_query(catalog_load_index(x->name)->schema);
	MemoryContextSwitchTo(old);
	return x->query;
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

/* Does g still take documents (not retired)? */
bool
ship_generation_active(const ShipGeneration *g)
{
	return g->row.state != GENERATION_RETIRED;
}

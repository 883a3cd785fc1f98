/*-------------------------------------------------------------------------
 *
 * follow.c
 *	  An index is owned by the role that owns its documents table,
 *	  flusso_docs.<index>, and lives as long as that table (which exists,
 *	  empty, when the table sink is off).  So the index catalog follows
 *	  what PostgreSQL does to those tables:
 *
 *	  - a new owner (ALTER TABLE ... OWNER TO, REASSIGN OWNED BY) becomes
 *		the index's owner, whose rights build it from then on;
 *	  - a table dropped other than by flusso (DROP TABLE, DROP OWNED BY)
 *		drops its index, with its signals and seed.
 *
 * A role that owns an index therefore cannot be dropped while it does
 * (its documents table depends on it), and REASSIGN OWNED / DROP OWNED,
 * the usual way to retire a role, leave no index with a dangling owner.
 * The drop hook notes which documents tables changed
 * (index_note_docs_table); the index catalog follows when the transaction
 * is about to commit, as the catalog's owner, and does nothing once the
 * extension itself is being dropped.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "hooks/follow.h"
#include "sink/sink.h"
#include "store/catalog_index.h"
#include "util/access.h"

/* documents tables dropped (names) or altered in this transaction */
static List *docs_dropped = NIL;
static bool docs_altered = false;
static bool callback_registered = false;

/*
 * dropped: names of documents tables dropped in this transaction; altered:
 * whether one was altered (its owner may have changed).
 */
static void
follow(List *dropped, bool altered)
{
	CatalogUser saved;
	ListCell   *lc;

	if (!OidIsValid(get_extension_oid("flusso", true)))
		return;
	/* at commit, statements have ended: take a snapshot of our own */
	PushActiveSnapshot(GetTransactionSnapshot());
	SPI_connect();
	catalog_become_owner(&saved);
	if (altered)
		catalog_follow_owners();
	foreach(lc, dropped)
	{
		/* gone for good: flusso's own drops (an index dropped, a swap) are not */
		if (catalog_forget_dropped(lfirst(lc)))
		{
			ereport(NOTICE,
					(errmsg("flusso index \"%s\" dropped with its documents table",
							(char *) lfirst(lc))));
			/* and a seed's next generation, when another role owned it */
			sink_next_discard(sink_for_index(lfirst(lc), InvalidOid, NULL));
		}
	}
	catalog_restore_user(&saved);
	SPI_finish();
	PopActiveSnapshot();
}

static void
follow_at_commit(XactEvent event, void *arg)
{
	List	   *dropped = docs_dropped;
	bool		altered = docs_altered;

	/* following may drop a next generation: that is flusso's own drop */
	docs_dropped = NIL;
	docs_altered = false;
	if ((event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PRE_PREPARE) &&
		(dropped != NIL || altered))
	{
		follow(dropped, altered);
		docs_dropped = NIL;
		docs_altered = false;
	}
}

/*
 * The drop hook saw relid dropped or altered: if it is a documents table,
 * its index follows when the transaction commits.
 */
void
index_note_docs_table(bool dropped, Oid relid)
{
	Oid			docs = get_namespace_oid(FLUSSO_DOCS_SCHEMA, true);
	MemoryContext old;

	if (!OidIsValid(docs) || get_rel_namespace(relid) != docs)
		return;
	if (!callback_registered)
	{
		RegisterXactCallback(follow_at_commit, NULL);
		callback_registered = true;
	}
	if (!dropped)
	{
		docs_altered = true;
		return;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	docs_dropped = lappend(docs_dropped, get_rel_name(relid));
	MemoryContextSwitchTo(old);
}

/*-------------------------------------------------------------------------
 *
 * partitions.c
 *	  A partitioned table gains or loses rows without a row change being
 *	  logged when a partition is attached (its rows join the table), or
 *	  detached or dropped (they leave it).  The change stream cannot say
 *	  which documents that touched, so every index that reads the
 *	  partitioned table, or one of its partitioned ancestors, is seeded
 *	  again: a "partitions" row in flusso.signal, inserted in the
 *	  transaction that changed the partitions, reaches the worker in stream
 *	  order, after every change committed before it.
 *
 * The utility and drop hooks note which partitioned tables changed; the
 * signals are inserted as the transaction is about to commit, as the
 * catalog's owner, so that a statement rolled back requests nothing
 * (altered.c, which requests seeds after other DDL, inserts them); each
 * index's tables are walked as its owner.  A
 * DETACH ... CONCURRENTLY commits its first step itself: the rows leave
 * the table in its second transaction, which requests the seed.  Creating
 * a partition (empty) and TRUNCATE of a partition (logged, see
 * cdc/plugin.c) need nothing here.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "binding/ready.h"
#include "binding/tables.h"
#include "store/catalog_signal.h"
#include "store/catalog_index.h"
#include "hooks/altered.h"
#include "hooks/partitions.h"

/* partitioned tables whose partitions changed in this transaction */
static List *changed_tables = NIL;
static bool callback_registered = false;

/* Does the index read one of the tables?  Walked as its owner. */
static bool
index_reads_any(const StoredIndex *index, List *relids)
{
	DiagnosticSink ignored = {NIL, index->name};
	ListCell   *lc;

	foreach(lc, bind_index_reads(index, &ignored))
	{
		if (list_member_oid(relids, ((TableUse *) lfirst(lc))->relid))
			return true;
	}
	return false;
}

static void
request_seeds_at_commit(XactEvent event, void *arg)
{
	List	   *relids = changed_tables;

	changed_tables = NIL;
	if ((event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PRE_PREPARE) &&
		relids != NIL)
		altered_request_seeds_where(SIGNAL_PARTITIONS, index_reads_any, relids);
}

/* The partitions of relid, and of each partitioned table above it, changed. */
static void
note_changed(Oid relid)
{
	MemoryContext old;

	if (!callback_registered)
	{
		RegisterXactCallback(request_seeds_at_commit, NULL);
		callback_registered = true;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	changed_tables = list_append_unique_oid(changed_tables, relid);
	if (get_rel_relispartition(relid))
		changed_tables = list_concat_unique_oid(changed_tables,
												get_partition_ancestors(relid));
	MemoryContextSwitchTo(old);
}

/*
 * After an ALTER TABLE ran: note its table when it attached or detached a
 * partition.
 */
void
partitions_note_statement(AlterTableStmt *stmt)
{
	ListCell   *lc;

	if (stmt->objtype != OBJECT_TABLE)
		return;
	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst(lc);
		Oid			relid;

		if (cmd->subtype != AT_AttachPartition && cmd->subtype != AT_DetachPartition &&
			cmd->subtype != AT_DetachPartitionFinalize)
			continue;
		relid = RangeVarGetRelid(stmt->relation, NoLock, true);
		if (OidIsValid(relid))
			note_changed(relid);
		return;
	}
}

/*
 * A relation is being dropped: note its table when it is a partition that
 * holds rows (not a partition's index).
 */
void
partitions_note_drop(Oid relid)
{
	char		relkind = get_rel_relkind(relid);

	if ((relkind == RELKIND_RELATION || relkind == RELKIND_PARTITIONED_TABLE ||
		 relkind == RELKIND_FOREIGN_TABLE) && get_rel_relispartition(relid))
		note_changed(get_partition_parent(relid, true));
}

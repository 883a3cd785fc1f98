/*-------------------------------------------------------------------------
 *
 * logged.c
 *	  Are the rows an index reads the rows whose changes the WAL carries?
 *	  An unlogged table, or an unlogged partition of a partitioned table,
 *	  changes without a trace in the WAL (and is emptied by crash
 *	  recovery without one): no change of it can be followed, so an index
 *	  reading it is in error until it is logged again.  A table that other
 *	  tables inherit from (not as partitions) is read ONLY, as its
 *	  children are neither published with it nor followed: their rows are
 *	  not in the index, which check says.
 *
 * Partitions that are foreign tables are api/check.c's (a warning: a
 * foreign table may hold rows that never change).  The worker judges an
 * index by the same errors (ready.c) before it builds it; the DDL hooks
 * have it look again when a table or partition becomes unlogged
 * (hooks/altered.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "binding/logged.h"

static char *
qualified_name(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

/* An unlogged table, or partition (at any depth) of a partitioned one. */
static void
check_unlogged(DiagnosticSink *sink, const TableUse *table)
{
	ListCell   *lc;

	if (get_rel_relkind(table->relid) != RELKIND_PARTITIONED_TABLE)
	{
		if (get_rel_persistence(table->relid) == RELPERSISTENCE_UNLOGGED)
			diag_add(sink, SEVERITY_ERROR, table->path,
					 psprintf("ALTER TABLE %s SET LOGGED;", qualified_name(table->relid)),
					 "table \"%s\" is unlogged: its changes are not written to the WAL, so the index cannot follow them",
					 table->display);
		return;
	}
	foreach(lc, find_all_inheritors(table->relid, AccessShareLock, NULL))
	{
		Oid			partition = lfirst_oid(lc);

		if (get_rel_relkind(partition) != RELKIND_RELATION ||
			get_rel_persistence(partition) != RELPERSISTENCE_UNLOGGED)
			continue;
		diag_add(sink, SEVERITY_ERROR, table->path,
				 psprintf("ALTER TABLE %s SET LOGGED;", qualified_name(partition)),
				 "partition %s of table \"%s\" is unlogged: its changes are not written to the WAL, so the index cannot follow them",
				 qualified_name(partition), table->display);
	}
}

/* Tables that inherit from a table that is not partitioned. */
static void
check_inherited(DiagnosticSink *sink, const TableUse *table)
{
	StringInfoData names;
	List	   *children;
	ListCell   *lc;

	if (get_rel_relkind(table->relid) == RELKIND_PARTITIONED_TABLE)
		return;
	children = find_inheritance_children(table->relid, AccessShareLock);
	if (children == NIL)
		return;
	initStringInfo(&names);
	foreach(lc, children)
		appendStringInfo(&names, "%s%s", names.len ? ", " : "", qualified_name(lfirst_oid(lc)));
	diag_add(sink, SEVERITY_WARNING, table->path,
			 "Define an index for each table that inherits, or make the table partitioned with them as its partitions.",
			 "table \"%s\" is inherited by %s, whose rows the index does not read: only the table's own rows are published with it",
			 table->display, names.data);
}

/*
 * Add what makes the table's rows change outside the WAL (errors) or
 * escape the index (a warning) to sink.
 */
void
bind_logged(DiagnosticSink *sink, const TableUse *table)
{
	check_unlogged(sink, table);
	check_inherited(sink, table);
}

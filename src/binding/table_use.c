/*-------------------------------------------------------------------------
 *
 * table_use.c
 *	  TableUse, the binding's model of what an index reads of one table:
 *	  one per relation, made when the walk (tables.c) or a resolution rule
 *	  (check/lookups.c) first names it, and the columns its rows are found
 *	  by.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/lsyscache.h"

#include "binding/tables.h"

/*
 * The table's rows are found by column: by builds when changed is NULL,
 * else when a change to that table is resolved.  Builds say more, so they
 * replace a change's reason; otherwise the first reason stays.
 */
void
table_use_add_lookup(TableUse *table, const char *column, const char *changed)
{
	TableLookup *lookup;
	ListCell   *lc;

	foreach(lc, table->lookups)
	{
		lookup = lfirst(lc);
		if (strcmp(lookup->column, column) == 0)
		{
			if (changed == NULL)
				lookup->changed = NULL;
			return;
		}
	}
	lookup = palloc0(sizeof(TableLookup));
	lookup->column = pstrdup(column);
	lookup->changed = changed ? pstrdup(changed) : NULL;
	table->lookups = lappend(table->lookups, lookup);
}

/* The TableUse of relid in *tables, added (first named at path) if new. */
TableUse *
table_use_merge(List **tables, Oid relid, const char *path)
{
	TableUse   *use;
	ListCell   *lc;

	foreach(lc, *tables)
	{
		use = lfirst(lc);
		if (use->relid == relid)
			return use;
	}
	use = palloc0(sizeof(TableUse));
	use->relid = relid;
	use->nspname = get_namespace_name(get_rel_namespace(relid));
	use->relname = get_rel_name(relid);
	use->display = psprintf("%s.%s", use->nspname, use->relname);
	use->path = pstrdup(path);
	*tables = lappend(*tables, use);
	return use;
}

/*-------------------------------------------------------------------------
 *
 * index_paths.c
 *	  Plans that use the indexes of the tables the shipper reads and
 *	  writes a bulk at a time.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/guc.h"

#include "store/index_paths.h"

/*
 * Plan the next statements with the tables' indexes alone, until
 * store_index_paths_end().  The shipper's tables (the outbox, the digests
 * of what OpenSearch holds) swing from empty to a seed's every document
 * and back faster than autovacuum's statistics follow them: left to its
 * estimates, the planner read the oldest 1,000 of 200,000 outbox rows
 * never analyzed by sorting them all (56 ms a bulk), and deleted 1,000
 * shipped rows by hashing the whole table, so each bulk cost more the more
 * was queued.  The settings are saved at a GUC nest level of their own, as
 * PostgreSQL's RI_Initial_Check sets work_mem for its one query.
 */
int
store_index_paths_begin(void)
{
	static const char *const plan_types[] = {
		"enable_seqscan", "enable_bitmapscan", "enable_sort",
		"enable_hashjoin", "enable_mergejoin", "enable_material",
	};
	int			level = NewGUCNestLevel();

	for (int i = 0; i < lengthof(plan_types); i++)
		(void) set_config_option(plan_types[i], "off", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	return level;
}

void
store_index_paths_end(int level)
{
	AtEOXact_GUC(true, level);
}

/*-------------------------------------------------------------------------
 *
 * spi_cache.c
 *	  Statements a background process runs again and again with new
 *	  parameters, each parsed and planned once: the plan is kept
 *	  (SPI_keepplan) under the statement's text, and PostgreSQL's plan
 *	  cache revalidates it when an object it uses changes or the
 *	  search_path differs, and chooses between custom and generic plans
 *	  as it does for a prepared statement.  Under a steady load the
 *	  worker and the shipper run a handful of catalog and outbox
 *	  statements per batch, a hundred batches a second: parsing and
 *	  planning them was a third of the shipper's CPU.
 *
 * A kept plan is planned again when a relation it reads has grown past
 * twice its size in blocks (and 16 blocks) since: the plan cache plans
 * again when a relation is altered or analyzed, not when it grows, and a
 * plan made while a table was nearly empty (a sequential scan of it under
 * a nested loop, say) would go on running against a table grown a
 * thousandfold before autovacuum analyzed it.  Checking costs a relation
 * open per relation and call, against a plan each call.
 *
 * For statements whose text is fixed, or varies only by the names of an
 * index and its tables: at most SPI_CACHE_LIMIT texts are kept, for the
 * life of the process (a worker starts again when definitions change);
 * past that, a statement is planned for each call, as if not cached.  A
 * plan replaced is freed only once no call is under way, so none can go
 * while a call (a trigger's, below another) runs it.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "executor/spi.h"
#include "nodes/parsenodes.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/plancache.h"
#include "utils/rel.h"

#include "util/spi_cache.h"
#include "util/string_hash.h"

#define SPI_CACHE_LIMIT 256
/* keys given as arrays up to which the generic plan is used */
#define GENERIC_MAX_KEYS 100

typedef struct CachedStatement
{
	char	   *sql;			/* the key, in the cache's context */
	SPIPlanPtr	plan;			/* kept: outlives SPI connections */
	int			nargs;
	int			cursor_options; /* what it was prepared with */
	int			nrelations;
	Oid		   *relations;		/* what the plan reads, */
	BlockNumber *blocks;		/* and their sizes when it was planned */
} CachedStatement;

static MemoryContext cache_context = NULL;
static HTAB *statements = NULL;
static int	nstatements = 0;
/* calls under way, and plans replaced meanwhile, to free once none is */
static int	running = 0;
static List *replaced = NIL;

/* The size of relid in blocks, 0 if it has no storage or is gone. */
static BlockNumber
relation_blocks(Oid relid)
{
	Relation	rel = try_relation_open(relid, AccessShareLock);
	BlockNumber blocks = 0;

	if (rel == NULL)
		return 0;
	if (RELKIND_HAS_STORAGE(rel->rd_rel->relkind))
		blocks = RelationGetNumberOfBlocks(rel);
	relation_close(rel, NoLock);
	return blocks;
}

/* Note the relations entry's plan reads, and their sizes now. */
static void
note_sizes(CachedStatement *entry)
{
	List	   *relids = NIL;
	ListCell   *lc;
	int			n = 0;

	foreach(lc, SPI_plan_get_plan_sources(entry->plan))
		relids = list_concat_unique_oid(relids, ((CachedPlanSource *) lfirst(lc))->relationOids);
	entry->nrelations = list_length(relids);
	entry->relations = MemoryContextAlloc(cache_context, sizeof(Oid) * Max(entry->nrelations, 1));
	entry->blocks = MemoryContextAlloc(cache_context, sizeof(BlockNumber) * Max(entry->nrelations, 1));
	foreach(lc, relids)
	{
		entry->relations[n] = lfirst_oid(lc);
		entry->blocks[n] = relation_blocks(lfirst_oid(lc));
		n++;
	}
	list_free(relids);
}

/* Has a relation entry's plan reads grown past twice its size then? */
static bool
grown(CachedStatement *entry)
{
	for (int i = 0; i < entry->nrelations; i++)
	{
		if (relation_blocks(entry->relations[i]) > 2 * entry->blocks[i] + 16)
			return true;
	}
	return false;
}

/* Free the plans replaced while calls were under way, once none is. */
static void
free_replaced(void)
{
	ListCell   *lc;

	if (running > 0 || replaced == NIL)
		return;
	foreach(lc, replaced)
		SPI_freeplan(lfirst(lc));
	list_free(replaced);
	replaced = NIL;
}

/* Prepare sql, and keep its plan: NULL once the cache is full. */
static SPIPlanPtr
prepare(const char *sql, int nargs, Oid *argtypes, int cursor_options, bool keep)
{
	SPIPlanPtr	plan = SPI_prepare_cursor(sql, nargs, argtypes, cursor_options);

	if (plan == NULL)
		elog(ERROR, "could not prepare \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	if (keep && SPI_keepplan(plan) != 0)
		elog(ERROR, "could not keep the plan of \"%s\"", sql);
	return plan;
}

/*
 * Run sql with the plan kept under its text, prepared with cursor_options
 * when it is first met.
 */
static int
execute_kept(const char *sql, int nargs, Oid *argtypes, Datum *values,
			 const char *nulls, bool read_only, long count, int cursor_options)
{
	CachedStatement *entry;
	SPIPlanPtr	plan;
	int			result;

	if (statements == NULL)
	{
		cache_context = AllocSetContextCreate(TopMemoryContext, "flusso cached statements",
											  ALLOCSET_SMALL_SIZES);
		statements = string_hash_create("flusso cached statements",
										sizeof(CachedStatement), cache_context);
	}
	free_replaced();
	entry = hash_search(statements, &sql, HASH_FIND, NULL);
	if (entry == NULL)
	{
		char	   *key;
		bool		found;

		/* full: planned for this call only, freed with the SPI connection */
		if (nstatements >= SPI_CACHE_LIMIT)
			return SPI_execute_plan(prepare(sql, nargs, argtypes, cursor_options, false),
									values, nulls, read_only, count);
		plan = prepare(sql, nargs, argtypes, cursor_options, true);
		key = MemoryContextStrdup(cache_context, sql);
		entry = hash_search(statements, &key, HASH_ENTER, &found);
		entry->plan = plan;
		entry->nargs = nargs;
		entry->cursor_options = cursor_options;
		note_sizes(entry);
		nstatements++;
	}
	else if (grown(entry))
	{
		/* planned anew; the old plan may be running in a call below this one */
		MemoryContext old;

		plan = prepare(sql, nargs, argtypes, cursor_options, true);
		old = MemoryContextSwitchTo(cache_context);
		replaced = lappend(replaced, entry->plan);
		MemoryContextSwitchTo(old);
		entry->plan = plan;
		pfree(entry->relations);
		pfree(entry->blocks);
		note_sizes(entry);
		free_replaced();
	}
	Assert(entry->nargs == nargs && entry->cursor_options == cursor_options);
	running++;
	PG_TRY();
	{
		result = SPI_execute_plan(entry->plan, values, nulls, read_only, count);
	}
	PG_FINALLY();
	{
		running--;
	}
	PG_END_TRY();
	return result;
}

/*
 * SPI_execute_with_args(), with the plan of sql kept for the next call;
 * in an SPI connection.  The plan cache chooses a custom or a generic
 * plan, as for a prepared statement.  The same text must always come
 * with the same argument types.
 */
int
spi_execute_cached(const char *sql, int nargs, Oid *argtypes, Datum *values,
				   const char *nulls, bool read_only, long count)
{
	return execute_kept(sql, nargs, argtypes, values, nulls, read_only, count, 0);
}

/*
 * Run sql, a statement reading rows by keys given as arrays, for nkeys of
 * them; in an SPI connection.  Up to GENERIC_MAX_KEYS, with its one
 * generic plan, planned once: the planner takes an array parameter for
 * one of a few elements, so that plan reads by keys, as a custom one would
 * for that many.  More keys (a bulk catch-up) are planned for.  Under a
 * steady load the worker writes a few documents a hundred times a second,
 * and planning its write and resolution statements each time was most of
 * its work.  Never call it with the text of a statement run through
 * spi_execute_cached().
 */
int
spi_execute_by_keys(const char *sql, int nkeys, int nargs, Oid *argtypes,
					Datum *values, bool read_only)
{
	if (nkeys <= GENERIC_MAX_KEYS)
		return execute_kept(sql, nargs, argtypes, values, NULL, read_only, 0,
							CURSOR_OPT_GENERIC_PLAN);
	return SPI_execute_with_args(sql, nargs, argtypes, values, NULL, read_only, 0);
}

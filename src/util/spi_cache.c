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
 * For statements whose text is fixed, or varies only by the names of an
 * index and its tables: at most SPI_CACHE_LIMIT texts are kept, for the
 * life of the process (a worker starts again when definitions change);
 * past that, a statement is planned for each call, as if not cached.  A
 * kept plan is never freed, so none can go while a call runs it.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "nodes/parsenodes.h"
#include "utils/memutils.h"

#include "util/spi_cache.h"
#include "util/string_hash.h"

#define SPI_CACHE_LIMIT 256

typedef struct CachedStatement
{
	char	   *sql;			/* the key, in the cache's context */
	SPIPlanPtr	plan;			/* kept: outlives SPI connections */
	int			nargs;
	int			cursor_options; /* what it was prepared with */
} CachedStatement;

static MemoryContext cache_context = NULL;
static HTAB *statements = NULL;
static int	nstatements = 0;

/*
 * Run sql with the plan kept under its text, prepared with cursor_options
 * when it is first met.
 */
static int
execute_kept(const char *sql, int nargs, Oid *argtypes, Datum *values,
			 const char *nulls, bool read_only, long count, int cursor_options)
{
	CachedStatement *entry;

	if (statements == NULL)
	{
		cache_context = AllocSetContextCreate(TopMemoryContext, "flusso cached statements",
											  ALLOCSET_SMALL_SIZES);
		statements = string_hash_create("flusso cached statements",
										sizeof(CachedStatement), cache_context);
	}
	entry = hash_search(statements, &sql, HASH_FIND, NULL);
	if (entry == NULL)
	{
		SPIPlanPtr	plan = SPI_prepare_cursor(sql, nargs, argtypes, cursor_options);
		char	   *key;
		bool		found;

		if (plan == NULL)
			elog(ERROR, "could not prepare \"%s\": %s", sql,
				 SPI_result_code_string(SPI_result));
		/* full: planned for this call only, freed with the SPI connection */
		if (nstatements >= SPI_CACHE_LIMIT)
			return SPI_execute_plan(plan, values, nulls, read_only, count);
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "could not keep the plan of \"%s\"", sql);
		key = MemoryContextStrdup(cache_context, sql);
		entry = hash_search(statements, &key, HASH_ENTER, &found);
		entry->plan = plan;
		entry->nargs = nargs;
		entry->cursor_options = cursor_options;
		nstatements++;
	}
	Assert(entry->nargs == nargs && entry->cursor_options == cursor_options);
	return SPI_execute_plan(entry->plan, values, nulls, read_only, count);
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
 * The same, always with one generic plan, planned once: for a statement
 * reading rows by keys given as arrays, called with at most
 * SPI_GENERIC_MAX_KEYS of them.  The planner takes an array parameter for
 * one of a few elements, so the generic plan reads by keys, as a custom
 * one would for that many; a caller with more keys (a bulk catch-up) runs
 * the statement planned for them.  Under a steady load the worker writes
 * a few documents a hundred times a second, and planning its write and
 * resolution statements each time was most of its work.  Never call it
 * with the text of a statement run through spi_execute_cached().
 */
int
spi_execute_generic(const char *sql, int nargs, Oid *argtypes, Datum *values,
					const char *nulls, bool read_only, long count)
{
	return execute_kept(sql, nargs, argtypes, values, nulls, read_only, count,
						CURSOR_OPT_GENERIC_PLAN);
}

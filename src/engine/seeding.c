/*-------------------------------------------------------------------------
 *
 * seeding.c
 *	  The verbs a seed walks an index's rows with (snapshot/seed.c): which
 *	  table the index reads is not published, the root keys in key order as
 *	  the index's owner, the keys the stream rebuilt while a chunk's window
 *	  was open, where the index writes (the current or the next generation
 *	  of its sinks), and the swap of the next generation in.  The seed sees
 *	  keys (char *[nkeys] of text values) and counts, never a build
 *	  statement, a resolution rule or the engine's structs.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "binding/publication.h"
#include "binding/tables.h"
#include "document/keyset.h"
#include "engine/engine_index.h"
#include "engine/engine_seed.h"

/* The root table, schema-qualified and quoted, for messages. */
const char *
engine_root_table(const EngineIndex *ei)
{
	return ei->query->root_qualified;
}

/* How many columns the root key has. */
int
engine_key_count(const EngineIndex *ei)
{
	return ei->query->nkeys;
}

/*
 * Does the current catalog show every table the index reads in the
 * publication?  NULL if so, or why not, naming the first one missing.
 */
char *
engine_unpublished_table(EngineIndex *ei, const char *publication)
{
	Datum	   *relids = palloc(sizeof(Datum) * Max(list_length(ei->reads), 1));
	Oid			argtypes[2] = {OIDARRAYOID, TEXTOID};
	Datum		values[2];
	MemoryContext caller = CurrentMemoryContext;
	char	   *missing = NULL;
	int			n = 0;
	ListCell   *lc;

	foreach(lc, ei->reads)
		relids[n++] = ObjectIdGetDatum(((TableUse *) lfirst(lc))->relid);
	values[0] = PointerGetDatum(construct_array(relids, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
	values[1] = CStringGetTextDatum(publication);
	SPI_connect();
	if (SPI_execute_with_args("SELECT r.relid::pg_catalog.regclass::pg_catalog.text "
							  "FROM pg_catalog.unnest($1) r(relid) WHERE NOT EXISTS ("
							  "SELECT 1 FROM " PUBLICATION_TABLES_FROM
							  "WHERE t.pubname OPERATOR(pg_catalog.=) $2 "
							  "AND c.oid OPERATOR(pg_catalog.=) r.relid) ORDER BY 1",
							  2, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read publication \"%s\"", publication);
	if (SPI_processed > 0)
	{
		char	   *table = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		missing = MemoryContextStrdup(caller,
									  psprintf("waiting to seed: publication \"%s\" does not publish table %s",
											   publication, table));
	}
	SPI_finish();
	return missing;
}

/* The largest root key, read as the owner; NULL when there is no row. */
char **
engine_largest_key(EngineIndex *ei)
{
	return doc_largest_key(ei->query, ei->index->owner);
}

/* About how many root rows there are. */
int64
engine_estimated_rows(EngineIndex *ei)
{
	return doc_estimated_rows(ei->query, ei->index->owner);
}

/* Up to limit root keys after after, up to upto, in key order. */
List *
engine_read_keys(EngineIndex *ei, char **after, char **upto, int limit)
{
	return doc_read_keys(ei->query, ei->index->owner, after, upto, limit);
}

/* keys less those in except, compared as the key types compare. */
List *
engine_keys_except(EngineIndex *ei, List *keys, List *except)
{
	return doc_keys_except(ei->query, ei->index->owner, keys, except);
}

/*
 * From now on, keep the keys the index's changes resolve to, in context,
 * until engine_capture_end() hands them back.
 */
void
engine_capture_begin(EngineIndex *ei, MemoryContext context)
{
	ei->captured = NIL;
	ei->capture_context = context;
	ei->capture = true;
}

List *
engine_capture_end(EngineIndex *ei)
{
	List	   *captured = ei->captured;

	ei->capture = false;
	ei->captured = NIL;
	return captured;
}

/* Write the index's documents to the next generation (a seed's), or not. */
void
engine_write_next(EngineIndex *ei, bool next)
{
	ei->next = next;
	ei->mirrored = 0;
	if (!next)
		(void) engine_capture_end(ei);
}

/* Does the index write to its next generation now? */
bool
engine_writes_next(const EngineIndex *ei)
{
	return ei->next;
}

/* An empty next generation, in every sink. */
void
engine_next_begin(EngineIndex *ei)
{
	sink_next_begin(ei->sink);
}

/* Is there a next generation to resume filling? */
bool
engine_next_exists(EngineIndex *ei)
{
	return sink_next_exists(ei->sink);
}

/* The next generation becomes the current one. */
void
engine_next_swap(EngineIndex *ei)
{
	ei->mirrored = 0;
	sink_next_swap(ei->sink);
}

/* Whether the index is to be seeded, as the worker sees it now. */
void
engine_needs_seed(EngineIndex *ei, bool needs_seed)
{
	ei->needs_seed = needs_seed;
	ei->mirrored = 0;
}

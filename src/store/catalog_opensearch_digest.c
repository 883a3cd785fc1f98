/*-------------------------------------------------------------------------
 *
 * catalog_opensearch_digest.c
 *	  flusso.opensearch_digest, a digest of each document an OpenSearch
 *	  generation holds as flusso wrote it: every statement over the table,
 *	  each written once, as a verb.  What the rows mean, and when they are
 *	  written, is shipper/ship_digest.c's.
 *
 * The shipper reads and writes the rows a bulk at a time, planned with the
 * table's primary key alone (store_index_paths_begin()); the worker and
 * the shipper forget a generation's rows with the generation.  Each verb
 * runs in the caller's role and transaction.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "store/catalog_opensearch_digest.h"
#include "util/spi_cache.h"
#include "store/index_paths.h"
#include "util/spi_run.h"

/*
 * Does the catalog have flusso.opensearch_digest (0.7.0 on)?  Until
 * ALTER EXTENSION flusso UPDATE made it, every document is sent.
 */
bool
digest_in_catalog(void)
{
	Oid			schema = get_namespace_oid("flusso", true);

	return OidIsValid(schema) && OidIsValid(get_relname_relid("opensearch_digest", schema));
}

/*
 * Of the documents given by generations (int8[]), ids (text[]) and
 * digests (bytea[], a NULL element: a delete), those the generation holds
 * with that digest: their ordinals (from 1), in *held (the caller's
 * memory); the others' rows are deleted, as a write of them is about to
 * be sent.  The number held.
 */
static void
read_ordinal(HeapTuple tuple, TupleDesc desc, void *arg)
{
	List	  **ordinals = arg;
	bool		isnull;

	*ordinals = lappend_int(*ordinals, (int) DatumGetInt64(SPI_getbinval(tuple, desc, 1, &isnull)));
}

int
digest_keep_held(Datum generations, Datum ids, Datum digests, int **held)
{
	Oid			types[3] = {INT8ARRAYOID, TEXTARRAYOID, BYTEAARRAYOID};
	Datum		values[3] = {generations, ids, digests};
	List	   *ordinals = NIL;
	int			level = store_index_paths_begin();
	int			n = 0;
	ListCell   *lc;

	(void) spi_read("WITH sent AS ("
					  "SELECT * FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2), "
					  "pg_catalog.unnest($3)) WITH ORDINALITY AS s(generation, id, digest, ord)), "
					  "gone AS (DELETE FROM flusso.opensearch_digest d USING sent s "
					  "WHERE d.generation OPERATOR(pg_catalog.=) s.generation "
					  "AND d.id OPERATOR(pg_catalog.=) s.id "
					  "AND d.digest IS DISTINCT FROM s.digest) "
					  "SELECT s.ord FROM sent s, flusso.opensearch_digest d "
					  "WHERE d.generation OPERATOR(pg_catalog.=) s.generation "
					  "AND d.id OPERATOR(pg_catalog.=) s.id "
					  "AND d.digest OPERATOR(pg_catalog.=) s.digest",
					  3, types, values, false, 0, read_ordinal, &ordinals);
	store_index_paths_end(level);
	*held = palloc(sizeof(int) * Max(list_length(ordinals), 1));
	foreach(lc, ordinals)
		(*held)[n++] = lfirst_int(lc);
	return n;
}

/*
 * The generations (int8[]) now hold the documents ids (text[]) with the
 * digests (bytea[]), as OpenSearch answered.
 */
void
digest_record(Datum generations, Datum ids, Datum digests)
{
	Oid			types[3] = {INT8ARRAYOID, TEXTARRAYOID, BYTEAARRAYOID};
	Datum		values[3] = {generations, ids, digests};
	int			level = store_index_paths_begin();

	(void) spi_run("INSERT INTO flusso.opensearch_digest AS d (generation, id, digest) "
					 "SELECT * FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2), "
					 "pg_catalog.unnest($3)) "
					 "ON CONFLICT (generation, id) DO UPDATE SET digest = EXCLUDED.digest",
					 3, types, values, SPI_OK_INSERT);
	store_index_paths_end(level);
}

/* Forget what generation holds: it is about to be emptied. */
void
digest_forget_generation(int64 generation)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(generation)};

	(void) spi_run("DELETE FROM flusso.opensearch_digest WHERE generation OPERATOR(pg_catalog.=) $1",
					 1, types, values, SPI_OK_DELETE);
}

/*
 * Forget what the generations of index hold of the documents ids names
 * (text[]): something else wrote them, and the next rebuild is sent.
 */
void
digest_forget_ids(const char *index, Datum ids)
{
	Oid			types[2] = {TEXTOID, TEXTARRAYOID};
	Datum		values[2] = {CStringGetTextDatum(index), ids};

	(void) spi_run("DELETE FROM flusso.opensearch_digest d USING flusso.opensearch_generation g "
					 "WHERE g.generation OPERATOR(pg_catalog.=) d.generation "
					 "AND g.index_name OPERATOR(pg_catalog.=) $1 AND d.id OPERATOR(pg_catalog.=) ANY ($2)",
					 2, types, values, SPI_OK_DELETE);
}

/* Forget what every generation holds (a copy starts over). */
void
digest_forget_every(void)
{
	(void) spi_run("DELETE FROM flusso.opensearch_digest", 0, NULL, NULL, SPI_OK_DELETE);
}

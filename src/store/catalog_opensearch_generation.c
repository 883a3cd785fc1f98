/*-------------------------------------------------------------------------
 *
 * catalog_opensearch_generation.c
 *	  flusso.opensearch_generation, the OpenSearch indexes of each index
 *	  (seeding, seeded, served, retired), and flusso.generation_seq, which
 *	  numbers them: every statement over the table, each written once, as
 *	  a verb.
 *
 * The worker begins, swaps and retires generations through the OpenSearch
 * sink (sink/opensearch_sink.c says what they mean); the shipper loads
 * them and records what it did.  Each verb runs in the caller's role and
 * transaction, in a SPI connection of its own; what it returns is
 * allocated in the caller's memory context.
 *
 * A generation begun since 0.6.0 is seeded by ranges: the shipper reads
 * the root keys and ships their documents a range at a time, recording
 * the last key shipped in the generation's row, and the seed queues none
 * (sink/opensearch_sink.c).  The library works with the older catalog
 * until ALTER EXTENSION UPDATE: without the ranges columns, a generation
 * is seeded by the queue, as before.
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
#include "utils/jsonb.h"
#include "utils/lsyscache.h"

#include "store/catalog_opensearch_digest.h"
#include "store/catalog_opensearch_generation.h"
#include "util/text_array.h"
#include "util/spi_run.h"

/* Statements about one generation, $1, (and an int8 $2) record its steps. */
static void
record(const char *sql, int64 generation, int64 arg2, int expected)
{
	Oid			types[2] = {INT8OID, INT8OID};
	Datum		values[2] = {Int64GetDatum(generation), Int64GetDatum(arg2)};

	(void) spi_run(sql, strstr(sql, "$2") ? 2 : 1, types, values, expected);
}

/*
 * Has flusso.opensearch_generation the column, as the database's flusso
 * objects may be older than the library?  Looked up in the system caches,
 * as every verb runs in a transaction.
 */
static bool
has_column(const char *column)
{
	Oid			schema = get_namespace_oid("flusso", true);
	Oid			table;

	if (!OidIsValid(schema))
		return false;
	table = get_relname_relid("opensearch_generation", schema);
	return OidIsValid(table) && get_attnum(table, column) != InvalidAttrNumber;
}

/* Does the catalog have the ranges columns (0.6.0 on)? */
bool
generation_ranges_in_catalog(void)
{
	return has_column("ranges_version");
}

/* Does the catalog have the remap column (0.11.0 on)? */
bool
generation_remap_in_catalog(void)
{
	return has_column("remap");
}

/*
 * The definition of index gained fields in place: every generation of it
 * not retired is to have the mapping of its fields put on it, before a
 * document that holds them is shipped to it (the shipper's remap step).
 */
void
generation_mark_remap(const char *index)
{
	(void) spi_run_text("UPDATE flusso.opensearch_generation SET remap = true, updated_at = pg_catalog.now() "
						  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
						  "AND state OPERATOR(pg_catalog.<>) 'retired'",
						  index, NULL, SPI_OK_UPDATE);
}

/* Is a generation of index not retired (serving or on its way)? */
bool
generation_any_active(const char *index)
{
	return spi_run_text("SELECT 1 FROM flusso.opensearch_generation "
						  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
						  "AND state OPERATOR(pg_catalog.<>) 'retired'",
						  index, NULL, SPI_OK_SELECT) > 0;
}

/* Is a generation of index being seeded? */
bool
generation_any_seeding(const char *index)
{
	return spi_run_text("SELECT 1 FROM flusso.opensearch_generation "
						  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
						  "AND state OPERATOR(pg_catalog.=) 'seeding'",
						  index, NULL, SPI_OK_SELECT) > 0;
}

/*
 * A new generation of index to seed, on server, owned by owner, behind
 * alias: its OpenSearch index is named <alias>-g<generation>-<random>,
 * created with settings (jsonb text); seeded by ranges from the current
 * WAL position, with the estimate of the seed's row (the seed writes it
 * first).
 */
void
generation_begin(const char *index, const char *server, Oid owner,
				 const char *alias, const char *settings)
{
	Oid			types[5] = {TEXTOID, TEXTOID, OIDOID, TEXTOID, JSONBOID};
	Datum		values[5];

	values[0] = CStringGetTextDatum(index);
	values[1] = CStringGetTextDatum(server);
	values[2] = ObjectIdGetDatum(owner);
	values[3] = CStringGetTextDatum(alias);
	values[4] = DirectFunctionCall1(jsonb_in, CStringGetDatum(settings));
	if (generation_ranges_in_catalog())
		(void) spi_run("INSERT INTO flusso.opensearch_generation "
				   "(generation, index_name, server_name, owner, alias, concrete, settings, state, "
				   "ranges_version, ranges_estimate) "
				   "SELECT g, $1, $2, $3::pg_catalog.regrole, $4, "
				   "pg_catalog.concat($4, '-g', g, '-', pg_catalog.left(pg_catalog.gen_random_uuid()::pg_catalog.text, 8)), "
				   "$5, 'seeding', "
				   "pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_insert_lsn(), '0/0')::pg_catalog.int8, "
				   "(SELECT s.total FROM flusso.seed s WHERE s.index_name OPERATOR(pg_catalog.=) $1) "
				   "FROM pg_catalog.nextval('flusso.generation_seq') g",
				   5, types, values, SPI_OK_INSERT);
	else
		(void) spi_run("INSERT INTO flusso.opensearch_generation "
				   "(generation, index_name, server_name, owner, alias, concrete, settings, state) "
				   "SELECT g, $1, $2, $3::pg_catalog.regrole, $4, "
				   "pg_catalog.concat($4, '-g', g, '-', pg_catalog.left(pg_catalog.gen_random_uuid()::pg_catalog.text, 8)), "
				   "$5, 'seeding' "
				   "FROM pg_catalog.nextval('flusso.generation_seq') g",
				   5, types, values, SPI_OK_INSERT);
}

/*
 * The generations of index not retired take options (jsonb text), which
 * build the same OpenSearch index as theirs: what changed is applied to a
 * live index (replicas, refresh_interval), by the shipper to the served
 * one, and by serving to the others.
 */
void
generation_set_options(const char *index, const char *options)
{
	Oid			types[2] = {TEXTOID, JSONBOID};
	Datum		values[2];

	values[0] = CStringGetTextDatum(index);
	values[1] = DirectFunctionCall1(jsonb_in, CStringGetDatum(options));
	(void) spi_run("UPDATE flusso.opensearch_generation SET settings = $2 "
					 "WHERE index_name OPERATOR(pg_catalog.=) $1 "
					 "AND state OPERATOR(pg_catalog.<>) 'retired'",
					 2, types, values, SPI_OK_UPDATE);
}

/*
 * Is a generation of index being seeded by ranges (the shipper reads its
 * documents' keys itself, and a seed's chunk queues none)?
 */
bool
generation_seeding_by_ranges(const char *index)
{
	if (!generation_ranges_in_catalog())
		return false;
	return spi_run_text("SELECT 1 FROM flusso.opensearch_generation "
						  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
						  "AND state OPERATOR(pg_catalog.=) 'seeding' "
						  "AND ranges_version IS NOT NULL",
						  index, NULL, SPI_OK_SELECT) > 0;
}

/* Retire the generations of index being seeded; how many. */
uint64
generation_retire_seeding(const char *index)
{
	return spi_run_text("UPDATE flusso.opensearch_generation SET state = 'retired', "
						  "updated_at = pg_catalog.now() WHERE index_name OPERATOR(pg_catalog.=) $1 "
						  "AND state OPERATOR(pg_catalog.=) 'seeding'",
						  index, NULL, SPI_OK_UPDATE);
}

/*
 * The seed of index is complete: its generation is seeded, and must ship
 * what was queued up to the WAL's insert position before it serves.
 */
void
generation_seeded(const char *index)
{
	(void) spi_run_text("UPDATE flusso.opensearch_generation SET state = 'seeded', "
						  "seeded_version = pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_insert_lsn(), "
						  "'0/0')::pg_catalog.int8, updated_at = pg_catalog.now() "
						  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
						  "AND state OPERATOR(pg_catalog.=) 'seeding'",
						  index, NULL, SPI_OK_UPDATE);
}

/* The generations of index are to be emptied, at version. */
void
generation_truncate(const char *index, XLogRecPtr version)
{
	Oid			types[2] = {TEXTOID, INT8OID};
	Datum		values[2] = {CStringGetTextDatum(index), Int64GetDatum((int64) version)};

	(void) spi_run("UPDATE flusso.opensearch_generation SET truncate_version = $2, "
			   "updated_at = pg_catalog.now() WHERE index_name OPERATOR(pg_catalog.=) $1 "
			   "AND state OPERATOR(pg_catalog.<>) 'retired'",
			   2, types, values, SPI_OK_UPDATE);
}

/* Retire every generation of index, for the shipper to delete. */
void
generation_retire_all(const char *index)
{
	(void) spi_run_text("UPDATE flusso.opensearch_generation SET state = 'retired', "
						  "updated_at = pg_catalog.now() WHERE index_name OPERATOR(pg_catalog.=) $1",
						  index, NULL, SPI_OK_UPDATE);
}

/*
 * Forget the generations of index not retired, left in OpenSearch, and
 * what they hold.
 */
void
generation_forget_active(const char *index)
{
	if (!digest_in_catalog())
	{
		(void) spi_run_text("DELETE FROM flusso.opensearch_generation "
							  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
							  "AND state OPERATOR(pg_catalog.<>) 'retired'",
							  index, NULL, SPI_OK_DELETE);
		return;
	}
	(void) spi_run_text("WITH gone AS (DELETE FROM flusso.opensearch_generation "
						  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
						  "AND state OPERATOR(pg_catalog.<>) 'retired' RETURNING generation) "
						  "DELETE FROM flusso.opensearch_digest d USING gone "
						  "WHERE d.generation OPERATOR(pg_catalog.=) gone.generation",
						  index, NULL, SPI_OK_DELETE);
}

/* A state as the table spells it (its CHECK allows these alone). */
static GenerationState
state_of(const char *text)
{
	if (strcmp(text, "seeding") == 0)
		return GENERATION_SEEDING;
	if (strcmp(text, "seeded") == 0)
		return GENERATION_SEEDED;
	if (strcmp(text, "served") == 0)
		return GENERATION_SERVED;
	if (strcmp(text, "retired") == 0)
		return GENERATION_RETIRED;
	elog(ERROR, "unknown state \"%s\" in flusso.opensearch_generation", text);
}

/*
 * Every generation, oldest first, read-only.  A seeded generation is
 * drained once no document queued before its seed ended waits; rejected
 * counts the documents of its index rejected since it was created.
 */
static void
read_generation(HeapTuple tuple, TupleDesc desc, void *arg)
{
	List	  **rows = arg;
	GenerationRow *g = palloc0(sizeof(GenerationRow));
	bool		isnull;

	g->generation = DatumGetInt64(SPI_getbinval(tuple, desc, 1, &isnull));
	g->index_name = SPI_getvalue(tuple, desc, 2);
	g->server_name = SPI_getvalue(tuple, desc, 3);
	g->owner = DatumGetObjectId(SPI_getbinval(tuple, desc, 4, &isnull));
	g->alias = SPI_getvalue(tuple, desc, 5);
	g->concrete = SPI_getvalue(tuple, desc, 6);
	g->state = state_of(SPI_getvalue(tuple, desc, 7));
	g->created = DatumGetBool(SPI_getbinval(tuple, desc, 8, &isnull));
	g->keep = DatumGetBool(SPI_getbinval(tuple, desc, 9, &isnull));
	g->seeded_version = DatumGetInt64(SPI_getbinval(tuple, desc, 10, &isnull));
	g->truncate_version = DatumGetInt64(SPI_getbinval(tuple, desc, 11, &isnull));
	g->create_body = SPI_getvalue(tuple, desc, 12);
	g->live_settings = SPI_getvalue(tuple, desc, 13);
	g->drained = DatumGetBool(SPI_getbinval(tuple, desc, 14, &isnull));
	g->rejected = DatumGetInt64(SPI_getbinval(tuple, desc, 15, &isnull));
	g->ranges_version = DatumGetInt64(SPI_getbinval(tuple, desc, 16, &isnull));
	g->ranges_done = DatumGetBool(SPI_getbinval(tuple, desc, 17, &isnull));
	g->remap = DatumGetBool(SPI_getbinval(tuple, desc, 18, &isnull));
	/* seeded by ranges, it is drained once every range is shipped too */
	g->drained = g->drained && (g->ranges_version < 0 || g->ranges_done);
	*rows = lappend(*rows, g);
}

List *
generation_load_all(void)
{
	List	   *rows = NIL;

	/* before 0.6.0, no generation is seeded by ranges */
	const char *ranges = generation_ranges_in_catalog()
		? "COALESCE(g.ranges_version, -1), g.ranges_done"
		: "-1::pg_catalog.int8, false";

	/* before 0.11.0, no definition gains fields in place */
	const char *remap = generation_remap_in_catalog() ? "g.remap" : "false";

	(void) spi_read(psprintf("SELECT g.generation, g.index_name, g.server_name, g.owner::pg_catalog.oid, "
							   "g.alias, g.concrete, g.state, g.created, g.keep, "
							   "COALESCE(g.seeded_version, -1), COALESCE(g.truncate_version, -1), "
							   "(g.settings OPERATOR(pg_catalog.->>) 'shards')::pg_catalog.int4, "
							   "pg_catalog.jsonb_build_object('index', pg_catalog.jsonb_build_object("
							   "'number_of_replicas', (g.settings OPERATOR(pg_catalog.->>) 'replicas')::pg_catalog.int4, "
							   "'refresh_interval', g.settings OPERATOR(pg_catalog.->>) 'refresh_interval'))::pg_catalog.text, "
							   "NOT EXISTS (SELECT 1 FROM flusso.outbox o "
							   "WHERE o.index_name OPERATOR(pg_catalog.=) g.index_name "
							   "AND o.version OPERATOR(pg_catalog.<=) g.seeded_version), "
							   "(SELECT pg_catalog.count(*) FROM flusso.rejected r "
							   "WHERE r.index_name OPERATOR(pg_catalog.=) g.index_name "
							   "AND r.rejected_at OPERATOR(pg_catalog.>=) g.created_at), %s, %s "
							   "FROM flusso.opensearch_generation g ORDER BY g.generation", ranges, remap),
					  0, NULL, NULL, true, 0, read_generation, &rows);
	return rows;
}

/* The generations of index not retired (read-only): n of them. */
static void
read_generation_number(HeapTuple tuple, TupleDesc desc, void *arg)
{
	List	  **generations = arg;
	bool		isnull;
	int64	   *generation = palloc(sizeof(int64));

	*generation = DatumGetInt64(SPI_getbinval(tuple, desc, 1, &isnull));
	*generations = lappend(*generations, generation);
}

int64 *
generation_targets(const char *index, int *n)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(index)};
	List	   *found = NIL;
	int64	   *generations;
	ListCell   *lc;

	(void) spi_read("SELECT generation FROM flusso.opensearch_generation "
					  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
					  "AND state OPERATOR(pg_catalog.<>) 'retired'",
					  1, types, values, true, 0, read_generation_number, &found);
	*n = 0;
	generations = palloc(sizeof(int64) * Max(list_length(found), 1));
	foreach(lc, found)
		generations[(*n)++] = *(int64 *) lfirst(lc);
	return generations;
}

/*
 * Does OpenSearch mirror the table sink of index: the index has the table
 * sink and is not to be seeded, and of its generations one serves and
 * none is being seeded or waits to serve?  The served generation, or 0.
 * Read-only, in the statement's snapshot.  The worker queues only the
 * documents the table sink changed while it does, and the shipper ships
 * what the table sink holds (sink/opensearch_sink.c says why).
 */
int64
generation_mirroring_table(const char *index)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(index)};

	return spi_read_int64("SELECT g.generation FROM flusso.opensearch_generation g "
							"WHERE g.index_name OPERATOR(pg_catalog.=) $1 "
							"AND g.state OPERATOR(pg_catalog.=) 'served' "
							"AND NOT EXISTS (SELECT 1 FROM flusso.opensearch_generation o "
							"WHERE o.index_name OPERATOR(pg_catalog.=) $1 "
							"AND (o.state OPERATOR(pg_catalog.=) 'seeding' "
							"OR o.state OPERATOR(pg_catalog.=) 'seeded')) "
							"AND EXISTS (SELECT 1 FROM flusso.index i "
							"WHERE i.name OPERATOR(pg_catalog.=) $1 AND NOT i.needs_seed) "
							"AND EXISTS (SELECT 1 FROM flusso.sink s "
							"WHERE s.index_name OPERATOR(pg_catalog.=) $1 "
							"AND s.sink OPERATOR(pg_catalog.=) 'table')",
							1, types, values);
}

/* The OpenSearch index of generation maps the fields its index has now. */
void
generation_remapped(int64 generation)
{
	record("UPDATE flusso.opensearch_generation SET remap = false, updated_at = pg_catalog.now() "
		   "WHERE generation OPERATOR(pg_catalog.=) $1", generation, 0, SPI_OK_UPDATE);
}

/* The OpenSearch index of generation exists. */
void
generation_created(int64 generation)
{
	record("UPDATE flusso.opensearch_generation SET created = true, updated_at = pg_catalog.now() "
		   "WHERE generation OPERATOR(pg_catalog.=) $1", generation, 0, SPI_OK_UPDATE);
}

/*
 * The last root key of generation shipped by ranges (nkeys values), in
 * the caller's memory context; NULL when none was.  Read-only.
 */
typedef struct KeyRead
{
	int			nkeys;
	char	  **key;			/* out */
	bool		wrong;			/* a key of another length */
} KeyRead;

static void
read_key(HeapTuple tuple, TupleDesc desc, void *arg)
{
	KeyRead    *read = arg;
	bool		isnull;
	Datum		after = SPI_getbinval(tuple, desc, 1, &isnull);

	if (isnull)
		return;
	read->key = text_array_to_strings(after, read->nkeys);
	read->wrong = read->key == NULL;
}

char **
generation_ranges_after(int64 generation, int nkeys)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(generation)};
	KeyRead		read = {nkeys, NULL, false};

	(void) spi_read("SELECT ranges_after FROM flusso.opensearch_generation "
					  "WHERE generation OPERATOR(pg_catalog.=) $1",
					  1, types, values, true, 1, read_key, &read);
	if (read.wrong)
		elog(ERROR, "generation " INT64_FORMAT " has a last key of another length than %d",
			 generation, nkeys);
	return read.key;
}

/*
 * Generation shipped the ranges up to key (nkeys values) included, read
 * keys more.
 */
void
generation_ranges_advance(int64 generation, char **key, int nkeys, int64 read)
{
	Oid			types[3] = {INT8OID, TEXTARRAYOID, INT8OID};
	Datum		values[3] = {Int64GetDatum(generation), text_array_from_strings(key, nkeys),
	Int64GetDatum(read)};

	(void) spi_run("UPDATE flusso.opensearch_generation SET ranges_after = $2, "
					 "ranges_shipped = ranges_shipped OPERATOR(pg_catalog.+) $3, "
					 "updated_at = pg_catalog.now() WHERE generation OPERATOR(pg_catalog.=) $1",
					 3, types, values, SPI_OK_UPDATE);
}

/* Generation shipped every range. */
void
generation_ranges_finish(int64 generation)
{
	record("UPDATE flusso.opensearch_generation SET ranges_done = true, updated_at = pg_catalog.now() "
		   "WHERE generation OPERATOR(pg_catalog.=) $1", generation, 0, SPI_OK_UPDATE);
}

/* Generation is emptied as the truncate at truncate_version asked. */
void
generation_emptied(int64 generation, int64 truncate_version)
{
	record("UPDATE flusso.opensearch_generation SET truncate_version = NULL, updated_at = pg_catalog.now() "
		   "WHERE generation OPERATOR(pg_catalog.=) $1 AND truncate_version OPERATOR(pg_catalog.=) $2",
		   generation, truncate_version, SPI_OK_UPDATE);
}

/*
 * Generation serves (its alias moved to it): the one served before, and
 * those seeded before it, are retired.
 */
void
generation_serve(int64 generation)
{
	record("UPDATE flusso.opensearch_generation SET state = CASE WHEN generation OPERATOR(pg_catalog.=) $1 "
		   "THEN 'served' ELSE 'retired' END, updated_at = pg_catalog.now() "
		   "WHERE index_name OPERATOR(pg_catalog.=) (SELECT index_name FROM flusso.opensearch_generation "
		   "WHERE generation OPERATOR(pg_catalog.=) $1) "
		   "AND (generation OPERATOR(pg_catalog.=) $1 OR state OPERATOR(pg_catalog.=) 'served' "
		   "OR (state OPERATOR(pg_catalog.=) 'seeded' AND generation OPERATOR(pg_catalog.<) $1))",
		   generation, 0, SPI_OK_UPDATE);
}

/* The served generation is gone from OpenSearch: retire it; false if it was not served. */
bool
generation_retire_served(int64 generation)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(generation)};

	return spi_run("UPDATE flusso.opensearch_generation SET state = 'retired', "
					 "keep = false, updated_at = pg_catalog.now() "
					 "WHERE generation OPERATOR(pg_catalog.=) $1 "
					 "AND state OPERATOR(pg_catalog.=) 'served'",
					 1, types, values, SPI_OK_UPDATE) == 1;
}

/*
 * Forget a retired generation, deleted from OpenSearch (or kept there),
 * and what it holds.
 */
void
generation_forget(int64 generation)
{
	record("DELETE FROM flusso.opensearch_generation WHERE generation OPERATOR(pg_catalog.=) $1",
		   generation, 0, SPI_OK_DELETE);
	if (digest_in_catalog())
		digest_forget_generation(generation);
}

/*
 * Forget every generation, in OpenSearch as it is: they are another
 * database's, this one being a copy of it (source/source.c).
 */
void
generation_forget_every(void)
{
	(void) spi_run("DELETE FROM flusso.opensearch_generation", 0, NULL, NULL, SPI_OK_DELETE);
	if (digest_in_catalog())
		digest_forget_every();
}

/*
 * A generation not created yet takes the names alias and concrete: its
 * server's index_prefix changed.
 */
void
generation_rename(int64 generation, const char *alias, const char *concrete)
{
	Oid			types[3] = {INT8OID, TEXTOID, TEXTOID};
	Datum		values[3];

	values[0] = Int64GetDatum(generation);
	values[1] = CStringGetTextDatum(alias);
	values[2] = CStringGetTextDatum(concrete);
	(void) spi_run("UPDATE flusso.opensearch_generation SET alias = $2, concrete = $3, "
					 "updated_at = pg_catalog.now() "
					 "WHERE generation OPERATOR(pg_catalog.=) $1 AND NOT created",
					 3, types, values, SPI_OK_UPDATE);
}

/*
 * The OpenSearch index the alias of index serves, with its server's name
 * and the alias, in the caller's memory context (read-only); NULL when
 * none serves.
 */
static void
read_served(HeapTuple tuple, TupleDesc desc, void *arg)
{
	char	  **names = arg;

	for (int i = 0; i < 3; i++)
		names[i] = SPI_getvalue(tuple, desc, i + 1);
}

char *
generation_served(const char *index, char **server_name, char **alias)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(index)};
	char	   *names[3] = {NULL, NULL, NULL};

	if (spi_read("SELECT concrete, server_name, alias FROM flusso.opensearch_generation "
				   "WHERE index_name OPERATOR(pg_catalog.=) $1 "
				   "AND state OPERATOR(pg_catalog.=) 'served'",
				   1, types, values, true, 1, read_served, names) == 0)
		return NULL;
	*server_name = names[1];
	*alias = names[2];
	return names[0];
}

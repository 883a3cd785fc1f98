/*-------------------------------------------------------------------------
 *
 * catalog_index.c
 *	  flusso.index, the stored indexes: loading them, and every other
 *	  statement over the table, each written once, as a verb.
 *
 * Loading parses each stored definition (definition.c) as the catalog
 * owner.  The other verbs run in the caller's role and transaction, in a
 * SPI connection of their own (nested in the caller's, if any); a result
 * they return is allocated in the caller's memory context.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "lib/stringinfo.h"
#include "utils/jsonb.h"

#include "util/pinned.h"
#include "ipc/requests.h"
#include "store/catalog_index.h"
#include "store/catalog_source.h"
#include "store/store_spi.h"
#include "util/spi_cache.h"

/*
 * Run a statement with name as $1 (and version as $2, when given) in a
 * SPI connection of its own; the number of rows it processed.
 */
static uint64
run(const char *sql, int expected, bool read_only, long tcount,
	const char *name, const char *version)
{
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		values[2];
	int			nargs = 0;
	uint64		processed;

	if (name)
		values[nargs++] = CStringGetTextDatum(name);
	if (version)
		values[nargs++] = CStringGetTextDatum(version);
	SPI_connect();
	if (SPI_execute_with_args(sql, nargs, argtypes, values, NULL, read_only, tcount) != expected)
		elog(ERROR, "could not run \"%s\"", sql);
	processed = SPI_processed;
	SPI_finish();
	return processed;
}

/*
 * The stored indexes, by name, with their parsed schemas, in the caller's
 * memory context: all of them, or only the one called only (none when it
 * does not exist).
 */
static List *
load_indexes(const char *only)
{
	MemoryContext caller_context = CurrentMemoryContext;
	CatalogUser saved;
	List	   *indexes = NIL;
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];

	SPI_connect();
	catalog_become_owner(&saved);
	values[0] = only ? CStringGetTextDatum(only) : (Datum) 0;
	if (SPI_execute_with_args(only
							  ? "SELECT name, owner::oid, source, version FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1"
							  : "SELECT name, owner::oid, source, version FROM flusso.index ORDER BY name",
							  only ? 1 : 0, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read flusso.index");
	catalog_restore_user(&saved);

	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		MemoryContext spi_context = MemoryContextSwitchTo(caller_context);
		StoredIndex *index = palloc0(sizeof(StoredIndex));

		index->name = TextDatumGetCString(SPI_getbinval(tuple, desc, 1, &isnull));
		index->owner = DatumGetObjectId(SPI_getbinval(tuple, desc, 2, &isnull));
		index->schema = index_parse_definition(DatumGetTextPP(SPI_getbinval(tuple, desc, 3, &isnull)))->schema;
		index->version = TextDatumGetCString(SPI_getbinval(tuple, desc, 4, &isnull));
		indexes = lappend(indexes, index);
		MemoryContextSwitchTo(spi_context);
	}
	SPI_finish();
	return indexes;
}

List *
catalog_load_indexes(void)
{
	return load_indexes(NULL);
}

/* One stored index; an error when there is none of that name. */
StoredIndex *
catalog_load_index(const char *name)
{
	List	   *found = load_indexes(name);

	if (found == NIL)
		index_report_missing(name);
	return linitial(found);
}

/*
 * The names of every stored index, in order, in the caller's memory context
 * (the list too): no definition is parsed.
 */
List *
catalog_index_names(void)
{
	MemoryContext caller_context = CurrentMemoryContext;
	CatalogUser saved;
	List	   *names = NIL;

	SPI_connect();
	catalog_become_owner(&saved);
	if (SPI_execute("SELECT name FROM flusso.index ORDER BY name", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read flusso.index");
	catalog_restore_user(&saved);
	names = store_text_column(caller_context);
	SPI_finish();
	return names;
}

/*
 * Store a new index owned by owner; false when one of that name exists
 * (the row is left alone).
 */
bool
catalog_insert_index(const char *name, const ParsedDefinition *parsed,
					 const text *source, Oid owner)
{
	Oid			argtypes[7] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, OIDOID};
	Datum		values[7];
	bool		inserted;

	values[0] = CStringGetTextDatum(name);
	values[1] = CStringGetTextDatum(parsed->version);
	values[2] = CStringGetTextDatum(parsed->schema->namespace);
	values[3] = CStringGetTextDatum(parsed->schema->table);
	values[4] = DirectFunctionCall1(jsonb_in, CStringGetDatum(parsed->canonical));
	values[5] = PointerGetDatum(source);
	values[6] = ObjectIdGetDatum(owner);
	SPI_connect();
	if (SPI_execute_with_args("INSERT INTO flusso.index "
							  "(name, version, schema_name, table_name, definition, source, owner) "
							  "VALUES ($1, $2, $3, $4, $5, $6, $7::regrole) "
							  "ON CONFLICT (name) DO NOTHING",
							  7, argtypes, values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not insert index \"%s\" into flusso.index", name);
	inserted = SPI_processed == 1;
	SPI_finish();
	return inserted;
}

/*
 * Replace the definition of an index; a new meaning is seeded again, unless
 * it is taken in place (fields added: index/index.c).
 */
void
catalog_replace_index(const char *name, const ParsedDefinition *parsed,
					  const text *source, bool in_place)
{
	Oid			argtypes[7] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, BOOLOID};
	Datum		values[7];

	values[0] = CStringGetTextDatum(name);
	values[1] = CStringGetTextDatum(parsed->version);
	values[2] = CStringGetTextDatum(parsed->schema->namespace);
	values[3] = CStringGetTextDatum(parsed->schema->table);
	values[4] = DirectFunctionCall1(jsonb_in, CStringGetDatum(parsed->canonical));
	values[5] = PointerGetDatum(source);
	values[6] = BoolGetDatum(in_place);
	SPI_connect();
	/* a new meaning is seeded again, unless it changes in place; the same is not */
	if (SPI_execute_with_args("UPDATE flusso.index SET version = $2, schema_name = $3, "
							  "table_name = $4, definition = $5, source = $6, "
							  "needs_seed = needs_seed OR (version IS DISTINCT FROM $2 AND NOT $7), "
							  "updated_at = pg_catalog.now() WHERE name OPERATOR(pg_catalog.=) $1",
							  7, argtypes, values, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update index \"%s\" in flusso.index", name);
	SPI_finish();
}

/*
 * The owner of an index, its row locked against concurrent changes;
 * InvalidOid when there is no such index.
 */
Oid
catalog_lock_index(const char *name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	bool		isnull;
	Oid			owner = InvalidOid;

	SPI_connect();
	if (SPI_execute_with_args("SELECT owner::oid FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE",
							  1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read index \"%s\" from flusso.index", name);
	if (SPI_processed > 0)
		owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	return owner;
}

/*
 * Lock the row of index name until the transaction ends, as a drop or a
 * replacement does: a change of its sinks made under it cannot cross a
 * seed's start, which holds the row while it creates the next generation.
 * As the catalog owner; an error when there is no such index.
 */
void
catalog_lock_index_row(const char *name)
{
	CatalogUser saved;
	Oid			owner;

	catalog_become_owner(&saved);
	owner = catalog_lock_index(name);
	catalog_restore_user(&saved);
	if (!OidIsValid(owner))
		index_report_missing(name);
}

/* Delete the row of an index; false when there was none. */
bool
catalog_delete_index(const char *name)
{
	return run("DELETE FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1",
			   SPI_OK_DELETE, false, 0, name, NULL) > 0;
}

/* Is there any index (after this transaction's own changes)? */
bool
catalog_has_indexes(void)
{
	return run("SELECT 1 FROM flusso.index", SPI_OK_SELECT, false, 1, NULL, NULL) > 0;
}

/*
 * The owner of an index is the owner of its documents table: follow an
 * ALTER TABLE ... OWNER TO of those.
 */
void
catalog_follow_owners(void)
{
	if (run("UPDATE flusso.index i SET owner = c.relowner::pg_catalog.regrole, "
			   "updated_at = pg_catalog.now() "
			   "FROM pg_catalog.pg_class c "
			   "WHERE c.relnamespace OPERATOR(pg_catalog.=) 'flusso_docs'::pg_catalog.regnamespace "
			   "AND c.relname OPERATOR(pg_catalog.=) i.name "
			   "AND c.relkind OPERATOR(pg_catalog.=) 'r' "
			   "AND c.relowner OPERATOR(pg_catalog.<>) i.owner::pg_catalog.oid",
			   SPI_OK_UPDATE, false, 0, NULL, NULL) > 0)
		request_catalog_look_at_commit();	/* the shipper builds as the owner */
}

/*
 * The documents table of index name was dropped: forget the index, its
 * signals and its seed, unless the table is there again (flusso's own
 * drops, of an index or by a swap, are not the user's).  True when the
 * index was forgotten.
 */
bool
catalog_forget_dropped(const char *name)
{
	bool		forgotten;

	forgotten = run("WITH gone AS (DELETE FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1 "
					"AND pg_catalog.to_regclass(pg_catalog.quote_ident('flusso_docs') "
					"OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) pg_catalog.quote_ident($1)) IS NULL "
					"RETURNING name), "
					"s AS (DELETE FROM flusso.signal WHERE index_name OPERATOR(pg_catalog.=) ANY (SELECT name FROM gone)), "
					"d AS (DELETE FROM flusso.seed WHERE index_name OPERATOR(pg_catalog.=) ANY (SELECT name FROM gone)) "
					"SELECT name FROM gone",
					SPI_OK_SELECT, false, 0, name, NULL) > 0;
	if (forgotten)
		request_catalog_look_at_commit();
	return forgotten;
}

/*
 * Names, versions, owners and sinks of every index, in order: a change of
 * any reloads the engine.  sinks_of_name is the SQL expression of an
 * index's sinks, given its name as "name".
 */
char *
catalog_indexes_signature(const char *sinks_of_name)
{
	StringInfoData buf;

	initStringInfo(&buf);
	SPI_connect();
	if (spi_execute_cached(psprintf("SELECT pg_catalog.concat_ws(':', name, version, owner::pg_catalog.oid, %s) "
									"FROM flusso.index ORDER BY name", sinks_of_name),
						   0, NULL, NULL, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read flusso.index");
	for (uint64 i = 0; i < SPI_processed; i++)
		appendStringInfo(&buf, "%s;", SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
	SPI_finish();
	return buf.data;
}

/* The names of the indexes marked for seeding. */
List *
catalog_indexes_to_seed(void)
{
	MemoryContext caller = CurrentMemoryContext;
	List	   *names = NIL;

	SPI_connect();
	if (SPI_execute("SELECT name FROM flusso.index WHERE needs_seed", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read flusso.index");
	names = store_text_column(caller);
	SPI_finish();
	return names;
}

/* Is index name still there?  Its row is then held (FOR SHARE). */
bool
catalog_share_index(const char *name)
{
	return run("SELECT 1 FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1 FOR SHARE",
			   SPI_OK_SELECT, false, 1, name, NULL) == 1;
}

/*
 * Is index name still at this version?  Its row is then held, FOR UPDATE
 * or FOR SHARE.
 */
bool
catalog_lock_index_version(const char *name, const char *version, bool for_update)
{
	return run(for_update
			   ? "SELECT 1 FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1 "
			   "AND version OPERATOR(pg_catalog.=) $2 FOR UPDATE"
			   : "SELECT 1 FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1 "
			   "AND version OPERATOR(pg_catalog.=) $2 FOR SHARE",
			   SPI_OK_SELECT, false, 0, name, version) == 1;
}

/*
 * Index name is to be seeded, from now on and after a restart; touch when
 * its definition changed (its sinks), which updated_at records.
 */
void
catalog_mark_for_seeding(const char *name, bool touch)
{
	(void) run(touch
			   ? "UPDATE flusso.index SET needs_seed = true, updated_at = pg_catalog.now() "
			   "WHERE name OPERATOR(pg_catalog.=) $1"
			   : "UPDATE flusso.index SET needs_seed = true WHERE name OPERATOR(pg_catalog.=) $1",
			   SPI_OK_UPDATE, false, 0, name, NULL);
}

/* Every index is to be seeded. */
void
catalog_mark_all_for_seeding(void)
{
	(void) run("UPDATE flusso.index SET needs_seed = true", SPI_OK_UPDATE, false, 0, NULL, NULL);
}

/* Index name is seeded. */
void
catalog_mark_seeded(const char *name)
{
	(void) run("UPDATE flusso.index SET needs_seed = false WHERE name OPERATOR(pg_catalog.=) $1",
			   SPI_OK_UPDATE, false, 0, name, NULL);
}

/*
 * The indexes whose sinks include OpenSearch, in name order, with the
 * settings of that sink.  Read-only: in the caller's snapshot.
 */
List *
catalog_opensearch_indexes(void)
{
	MemoryContext caller = CurrentMemoryContext;
	List	   *indexes = NIL;

	bool		conflicts = catalog_source_in_catalog();

	SPI_connect();
	if (SPI_execute(psprintf("SELECT i.name, i.owner::pg_catalog.oid, s.server_name, "
							 "s.options OPERATOR(pg_catalog.->>) 'on_error', s.stopped, i.owner::pg_catalog.text, "
							 "%s FROM flusso.sink s JOIN flusso.index i ON i.name OPERATOR(pg_catalog.=) s.index_name "
							 "WHERE s.sink OPERATOR(pg_catalog.=) 'opensearch' ORDER BY i.name",
							 conflicts ? "s.conflict, s.take_alias" : "NULL::pg_catalog.text, false"),
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read flusso.sink");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		MemoryContext spi = MemoryContextSwitchTo(caller);
		OpenSearchIndexRow *row = palloc0(sizeof(OpenSearchIndexRow));
		bool		isnull;

		row->name = SPI_getvalue(tuple, desc, 1);
		row->owner = DatumGetObjectId(SPI_getbinval(tuple, desc, 2, &isnull));
		row->server_name = SPI_getvalue(tuple, desc, 3);
		row->on_error = SPI_getvalue(tuple, desc, 4);
		row->stopped = SPI_getvalue(tuple, desc, 5);
		row->owner_name = SPI_getvalue(tuple, desc, 6);
		row->conflict = SPI_getvalue(tuple, desc, 7);
		row->take_alias = DatumGetBool(SPI_getbinval(tuple, desc, 8, &isnull));
		indexes = lappend(indexes, row);
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	return indexes;
}

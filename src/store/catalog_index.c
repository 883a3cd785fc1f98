/*-------------------------------------------------------------------------
 *
 * catalog_index.c
 *	  flusso.index, the stored indexes: loading them, and every other
 *	  statement over the table, each written once, as a verb.
 *
 * Loading parses each stored definition (definition.c) as the catalog
 * owner.  The other verbs run in the caller's role and transaction, in a
 * SPI connection of their own (util/spi_run.c, nested in the caller's, if
 * any); a result they return is allocated in the caller's memory context.
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
#include "util/spi_run.h"

/*
 * The stored indexes, by name, with their parsed schemas, in the caller's
 * memory context: all of them, or only the one called only (none when it
 * does not exist).
 */
static void
read_index(HeapTuple tuple, TupleDesc desc, void *arg)
{
	List	  **indexes = arg;
	StoredIndex *index = palloc0(sizeof(StoredIndex));
	bool		isnull;

	index->name = TextDatumGetCString(SPI_getbinval(tuple, desc, 1, &isnull));
	index->owner = DatumGetObjectId(SPI_getbinval(tuple, desc, 2, &isnull));
	index->schema = index_parse_definition(DatumGetTextPP(SPI_getbinval(tuple, desc, 3, &isnull)))->schema;
	index->version = TextDatumGetCString(SPI_getbinval(tuple, desc, 4, &isnull));
	*indexes = lappend(*indexes, index);
}

static List *
load_indexes(const char *only)
{
	CatalogUser saved;
	List	   *indexes = NIL;
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {only ? CStringGetTextDatum(only) : (Datum) 0};

	catalog_become_owner(&saved);
	(void) spi_read(only
					  ? "SELECT name, owner::oid, source, version FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1"
					  : "SELECT name, owner::oid, source, version FROM flusso.index ORDER BY name",
					  only ? 1 : 0, argtypes, values, true, 0, read_index, &indexes);
	catalog_restore_user(&saved);
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
	CatalogUser saved;
	List	   *names;

	catalog_become_owner(&saved);
	names = spi_read_texts("SELECT name FROM flusso.index ORDER BY name", 0, NULL, NULL);
	catalog_restore_user(&saved);
	return names;
}

/* the types of $1 to $6 of a definition, as definition_values() fills them */
#define DEFINITION_TYPES TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID

/*
 * values[0..5]: an index's name, version, schema, table, canonical
 * definition (jsonb) and source, as flusso.index stores them.
 */
static void
definition_values(Datum *values, const char *name, const ParsedDefinition *parsed,
				  const text *source)
{
	values[0] = CStringGetTextDatum(name);
	values[1] = CStringGetTextDatum(parsed->version);
	values[2] = CStringGetTextDatum(parsed->schema->namespace);
	values[3] = CStringGetTextDatum(parsed->schema->table);
	values[4] = DirectFunctionCall1(jsonb_in, CStringGetDatum(parsed->canonical));
	values[5] = PointerGetDatum(source);
}

/*
 * Store a new index owned by owner; false when one of that name exists
 * (the row is left alone).
 */
bool
catalog_insert_index(const char *name, const ParsedDefinition *parsed,
					 const text *source, Oid owner)
{
	Oid			argtypes[7] = {DEFINITION_TYPES, OIDOID};
	Datum		values[7];

	definition_values(values, name, parsed, source);
	values[6] = ObjectIdGetDatum(owner);
	return spi_run("INSERT INTO flusso.index "
					 "(name, version, schema_name, table_name, definition, source, owner) "
					 "VALUES ($1, $2, $3, $4, $5, $6, $7::regrole) "
					 "ON CONFLICT (name) DO NOTHING",
					 7, argtypes, values, SPI_OK_INSERT) == 1;
}

/*
 * Replace the definition of an index; a new meaning is seeded again, unless
 * it is taken in place (fields added: api/index.c).
 */
void
catalog_replace_index(const char *name, const ParsedDefinition *parsed,
					  const text *source, bool in_place)
{
	Oid			argtypes[7] = {DEFINITION_TYPES, BOOLOID};
	Datum		values[7];

	definition_values(values, name, parsed, source);
	values[6] = BoolGetDatum(in_place);
	/* a new meaning is seeded again, unless it changes in place; the same is not */
	(void) spi_run("UPDATE flusso.index SET version = $2, schema_name = $3, "
					 "table_name = $4, definition = $5, source = $6, "
					 "needs_seed = needs_seed OR (version IS DISTINCT FROM $2 AND NOT $7), "
					 "updated_at = pg_catalog.now() WHERE name OPERATOR(pg_catalog.=) $1",
					 7, argtypes, values, SPI_OK_UPDATE);
}

/*
 * The owner of an index, its row locked against concurrent changes;
 * InvalidOid when there is no such index.
 */
static void
read_oid(HeapTuple tuple, TupleDesc desc, void *arg)
{
	bool		isnull;

	*(Oid *) arg = DatumGetObjectId(SPI_getbinval(tuple, desc, 1, &isnull));
}

Oid
catalog_lock_index(const char *name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	Oid			owner = InvalidOid;

	(void) spi_read("SELECT owner::oid FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE",
					  1, argtypes, values, false, 1, read_oid, &owner);
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
	return spi_run_text("DELETE FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1",
						  name, NULL, SPI_OK_DELETE) > 0;
}

/* Is there any index (after this transaction's own changes)? */
bool
catalog_has_indexes(void)
{
	return spi_run("SELECT 1 FROM flusso.index LIMIT 1",
					 0, NULL, NULL, SPI_OK_SELECT) > 0;
}

/*
 * The owner of an index is the owner of its documents table: follow an
 * ALTER TABLE ... OWNER TO of those.
 */
void
catalog_follow_owners(void)
{
	if (spi_run("UPDATE flusso.index i SET owner = c.relowner::pg_catalog.regrole, "
				  "updated_at = pg_catalog.now() "
				  "FROM pg_catalog.pg_class c "
				  "WHERE c.relnamespace OPERATOR(pg_catalog.=) 'flusso_docs'::pg_catalog.regnamespace "
				  "AND c.relname OPERATOR(pg_catalog.=) i.name "
				  "AND c.relkind OPERATOR(pg_catalog.=) 'r' "
				  "AND c.relowner OPERATOR(pg_catalog.<>) i.owner::pg_catalog.oid",
				  0, NULL, NULL, SPI_OK_UPDATE) > 0)
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

	forgotten = spi_run_text("WITH gone AS (DELETE FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1 "
							   "AND pg_catalog.to_regclass(pg_catalog.quote_ident('flusso_docs') "
							   "OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) pg_catalog.quote_ident($1)) IS NULL "
							   "RETURNING name), "
							   "s AS (DELETE FROM flusso.signal WHERE index_name OPERATOR(pg_catalog.=) ANY (SELECT name FROM gone)), "
							   "d AS (DELETE FROM flusso.seed WHERE index_name OPERATOR(pg_catalog.=) ANY (SELECT name FROM gone)) "
							   "SELECT name FROM gone",
							   name, NULL, SPI_OK_SELECT) > 0;
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
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, spi_read_texts(psprintf("SELECT pg_catalog.concat_ws(':', name, version, owner::pg_catalog.oid, %s) "
										  "FROM flusso.index ORDER BY name", sinks_of_name),
								 0, NULL, NULL))
		appendStringInfo(&buf, "%s;", (char *) lfirst(lc));
	return buf.data;
}

/* The names of the indexes marked for seeding. */
List *
catalog_indexes_to_seed(void)
{
	return spi_read_texts("SELECT name FROM flusso.index WHERE needs_seed", 0, NULL, NULL);
}

/* Is index name still there?  Its row is then held (FOR SHARE). */
bool
catalog_share_index(const char *name)
{
	return spi_run_text("SELECT 1 FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1 FOR SHARE",
						  name, NULL, SPI_OK_SELECT) == 1;
}

/*
 * Is index name still at this version?  Its row is then held, FOR UPDATE
 * or FOR SHARE.
 */
bool
catalog_lock_index_version(const char *name, const char *version, bool for_update)
{
	return spi_run_text(for_update
						  ? "SELECT 1 FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1 "
						  "AND version OPERATOR(pg_catalog.=) $2 FOR UPDATE"
						  : "SELECT 1 FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1 "
						  "AND version OPERATOR(pg_catalog.=) $2 FOR SHARE",
						  name, version, SPI_OK_SELECT) == 1;
}

/*
 * Index name is to be seeded, from now on and after a restart; touch when
 * its definition changed (its sinks), which updated_at records.
 */
void
catalog_mark_for_seeding(const char *name, bool touch)
{
	(void) spi_run_text(touch
						  ? "UPDATE flusso.index SET needs_seed = true, updated_at = pg_catalog.now() "
						  "WHERE name OPERATOR(pg_catalog.=) $1"
						  : "UPDATE flusso.index SET needs_seed = true WHERE name OPERATOR(pg_catalog.=) $1",
						  name, NULL, SPI_OK_UPDATE);
}

/* Every index is to be seeded. */
void
catalog_mark_all_for_seeding(void)
{
	(void) spi_run("UPDATE flusso.index SET needs_seed = true",
					 0, NULL, NULL, SPI_OK_UPDATE);
}

/* Index name is seeded. */
void
catalog_mark_seeded(const char *name)
{
	(void) spi_run_text("UPDATE flusso.index SET needs_seed = false WHERE name OPERATOR(pg_catalog.=) $1",
						  name, NULL, SPI_OK_UPDATE);
}

/*
 * The indexes whose sinks include OpenSearch, in name order, with the
 * settings of that sink.  Read-only: in the caller's snapshot.
 */
static void
read_opensearch_index(HeapTuple tuple, TupleDesc desc, void *arg)
{
	List	  **indexes = arg;
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
	*indexes = lappend(*indexes, row);
}

List *
catalog_opensearch_indexes(void)
{
	List	   *indexes = NIL;
	bool		conflicts = catalog_source_in_catalog();

	(void) spi_read(psprintf("SELECT i.name, i.owner::pg_catalog.oid, s.server_name, "
							   "s.options OPERATOR(pg_catalog.->>) 'on_error', s.stopped, i.owner::pg_catalog.text, "
							   "%s FROM flusso.sink s JOIN flusso.index i ON i.name OPERATOR(pg_catalog.=) s.index_name "
							   "WHERE s.sink OPERATOR(pg_catalog.=) 'opensearch' ORDER BY i.name",
							   conflicts ? "s.conflict, s.take_alias" : "NULL::pg_catalog.text, false"),
					  0, NULL, NULL, true, 0, read_opensearch_index, &indexes);
	return indexes;
}

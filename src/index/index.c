/*-------------------------------------------------------------------------
 *
 * index.c
 *	  The SQL functions that store, replace, drop and describe index
 *	  definitions: flusso_create_index, flusso_drop_index, flusso_mapping
 *	  (of a stored definition, or of one given as text).
 *
 * A definition is validated by the schema model before anything is
 * written; a rejected definition changes nothing.  What is stored is the
 * text as given (so it can be read back and re-derived), its canonical form
 * as jsonb, and the version: a hash of the canonical form.  Whether the
 * tables and columns exist is flusso_check()'s business, not create's.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "index/access.h"
#include "index/definition.h"
#include "sink/sink.h"
#include "ipc/requests.h"
#include "schema/schema.h"

PG_FUNCTION_INFO_V1(flusso_create_index);
PG_FUNCTION_INFO_V1(flusso_drop_index);
PG_FUNCTION_INFO_V1(flusso_mapping);

static void
check_index_name(const char *name)
{
	if (!schema_valid_identifier(name))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("invalid index name \"%s\"", name),
				 errhint("Index names must match ^[a-z_][a-z0-9_]*$ and have at most 63 characters: they name the table flusso_docs.<name>.")));
}

/*
 * The owner of an index, locked against concurrent changes; InvalidOid when
 * there is no such index.  Runs inside SPI as the catalog owner.
 */
static Oid
lock_index(const char *name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	bool		isnull;
	Datum		owner;

	if (SPI_execute_with_args("SELECT owner::oid FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE",
							  1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read index \"%s\" from flusso.index", name);
	if (SPI_processed == 0)
		return InvalidOid;
	owner = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return DatumGetObjectId(owner);
}

/*
 * Lock the row of index name until the transaction ends, as a drop or a
 * replacement does: a change of its sinks made under it cannot cross a
 * seed's start, which holds the row while it creates the next generation.
 */
void
index_lock_row(const char *name)
{
	CatalogUser saved;
	Oid			owner;

	SPI_connect();
	catalog_become_owner(&saved);
	owner = lock_index(name);
	catalog_restore_user(&saved);
	SPI_finish();
	if (!OidIsValid(owner))
		index_report_missing(name);
}

/*
 * flusso_create_index(name text, definition text, replace boolean)
 *
 * Store a validated definition under name, owned by the calling role.  An
 * existing index is an error unless replace is true; replacing keeps the
 * owner and creation time and takes the owner's rights.
 */
Datum
flusso_create_index(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	text	   *definition = PG_GETARG_TEXT_PP(1);
	bool		replace = PG_GETARG_BOOL(2);
	Oid			caller = GetUserId();
	ParsedDefinition *parsed;
	CatalogUser saved;
	Oid			argtypes[7] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, OIDOID};
	Datum		values[7];
	Oid			owner = InvalidOid;
	bool		inserted;

	flusso_require_admin();
	check_index_name(name);
	parsed = index_parse_definition(definition);
	index_check_raw_filters(parsed->schema);

	values[0] = CStringGetTextDatum(name);
	values[1] = CStringGetTextDatum(parsed->version);
	values[2] = CStringGetTextDatum(parsed->schema->namespace);
	values[3] = CStringGetTextDatum(parsed->schema->table);
	values[4] = DirectFunctionCall1(jsonb_in, CStringGetDatum(parsed->canonical));
	values[5] = PointerGetDatum(definition);
	values[6] = ObjectIdGetDatum(caller);

	SPI_connect();
	catalog_become_owner(&saved);
	if (SPI_execute_with_args("INSERT INTO flusso.index "
							  "(name, version, schema_name, table_name, definition, source, owner) "
							  "VALUES ($1, $2, $3, $4, $5, $6, $7::regrole) "
							  "ON CONFLICT (name) DO NOTHING",
							  7, argtypes, values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not insert index \"%s\" into flusso.index", name);
	inserted = SPI_processed == 1;
	if (!inserted)
		owner = lock_index(name);
	catalog_restore_user(&saved);

	if (!inserted)
	{
		if (!replace)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("index \"%s\" already exists", name),
					 errhint("Pass replace => true to replace its definition.")));
		flusso_require_owner(owner, name);

		catalog_become_owner(&saved);
		/* a new meaning is seeded again; the same meaning is not */
		if (SPI_execute_with_args("UPDATE flusso.index SET version = $2, schema_name = $3, "
								  "table_name = $4, definition = $5, source = $6, "
								  "needs_seed = needs_seed OR version IS DISTINCT FROM $2, "
								  "updated_at = pg_catalog.now() WHERE name OPERATOR(pg_catalog.=) $1",
								  6, argtypes, values, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not update index \"%s\" in flusso.index", name);
		catalog_restore_user(&saved);
	}
	SPI_finish();
	if (inserted)
		sink_create(sink_for_index(name, caller, NULL));
	request_worker_at_commit(true);
	PG_RETURN_VOID();
}

/*
 * flusso_drop_index(name text, keep_opensearch boolean): forget an index,
 * its definition and its documents; its OpenSearch indexes are deleted by
 * the shipper, unless kept.
 */
Datum
flusso_drop_index(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		keep = PG_NARGS() > 1 && PG_GETARG_BOOL(1);
	MemoryContext context = CurrentMemoryContext;
	MemoryContext spi;
	IndexSink  *sink;
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	CatalogUser saved;
	Oid			owner;

	flusso_require_admin();

	SPI_connect();
	catalog_become_owner(&saved);
	owner = lock_index(name);
	catalog_restore_user(&saved);
	if (!OidIsValid(owner))
		index_report_missing(name);
	flusso_require_owner(owner, name);
	/* the sinks, as they were, kept beyond SPI */
	spi = MemoryContextSwitchTo(context);
	sink = sink_for_index(name, owner, NULL);
	MemoryContextSwitchTo(spi);

	catalog_become_owner(&saved);
	if (SPI_execute_with_args("DELETE FROM flusso.index WHERE name OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete index \"%s\" from flusso.index", name);
	if (SPI_execute_with_args("DELETE FROM flusso.signal WHERE index_name OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE ||
		SPI_execute_with_args("DELETE FROM flusso.seed WHERE index_name OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete the signals and seed of index \"%s\"", name);
	if (SPI_execute("SELECT 1 FROM flusso.index", false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read flusso.index");
	/* the last index gone: the worker drops its slot, nothing retains WAL */
	request_worker_at_commit(SPI_processed > 0);
	catalog_restore_user(&saved);
	SPI_finish();
	sink_drop(sink, keep);
	sink_forget(name);
	PG_RETURN_VOID();
}

/*
 * flusso_mapping(name text) RETURNS jsonb
 *
 * The OpenSearch index body derived from a definition: the stored one of
 * the index called name, or, when the argument is no index name, the
 * definition it is.  Text that matches the index name pattern
 * (^[a-z_][a-z0-9_]*$) cannot be a definition, which is a mapping with
 * keys, so one argument serves both without a second function of the same
 * signature.  Nothing is read but the definition.
 */
Datum
flusso_mapping(PG_FUNCTION_ARGS)
{
	text	   *arg = PG_GETARG_TEXT_PP(0);
	char	   *name = text_to_cstring(arg);
	IndexSchema *schema;

	flusso_require_admin();
	if (schema_valid_identifier(name))
		schema = index_load(name)->schema;
	else
		schema = index_parse_definition(arg)->schema;
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in,
										CStringGetDatum(schema_mapping_json(schema))));
}

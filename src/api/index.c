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

#include "store/catalog_index.h"
#include "store/catalog_opensearch_generation.h"
#include "store/catalog_seed.h"
#include "store/catalog_signal.h"
#include "sink/sink.h"
#include "ipc/requests.h"
#include "schema/schema.h"
#include "util/access.h"

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
 * May index before take the definition after in place, seeding nothing:
 * after adds fields and changes nothing else (schema_adds_fields_only), an
 * OpenSearch index it ships to can take their mapping as it is (the same
 * analysis settings, which an open index cannot change), and the catalog
 * can record the steps (0.11.0 on)?  Then the generations it has map the
 * new fields and its documents are rebuilt where they are.
 */
static bool
fields_added_in_place(const StoredIndex *before, const ParsedDefinition *after)
{
	IndexSink  *sink;

	if (strcmp(before->version, after->version) == 0 ||
		!schema_adds_fields_only(before->schema, after->schema) ||
		!generation_remap_in_catalog())
		return false;
	sink = sink_for_index(before->name, before->owner, NULL);
	if (sink->server != NULL &&
		strcmp(schema_analysis_json(before->schema), schema_analysis_json(after->schema)) != 0)
	{
		ereport(NOTICE,
				(errmsg("index \"%s\" is seeded again into a new OpenSearch index: the fields it gains need analysis settings an open OpenSearch index cannot take",
						before->name)));
		return false;
	}
	return true;
}

/*
 * flusso_create_index(name text, definition text, replace boolean)
 *
 * Store a validated definition under name, owned by the calling role.  An
 * existing index is an error unless replace is true; replacing keeps the
 * owner and creation time and takes the owner's rights.  A definition that
 * only gains fields is taken in place; any other new meaning is seeded
 * again, into a new generation.
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
	Oid			owner = InvalidOid;
	bool		inserted;
	bool		in_place;

	flusso_require_admin();
	check_index_name(name);
	parsed = index_parse_definition(definition);
	index_check_raw_filters(parsed->schema);

	SPI_connect();
	catalog_become_owner(&saved);
	inserted = catalog_insert_index(name, parsed, definition, caller);
	if (!inserted)
		owner = catalog_lock_index(name);
	catalog_restore_user(&saved);

	if (!inserted)
	{
		if (!replace)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("index \"%s\" already exists", name),
					 errhint("Pass replace => true to replace its definition.")));
		flusso_require_owner(owner, name);
		in_place = fields_added_in_place(catalog_load_index(name), parsed);

		catalog_become_owner(&saved);
		catalog_replace_index(name, parsed, definition, in_place);
		if (in_place)
		{
			generation_mark_remap(name);
			(void) catalog_request(SIGNAL_REBUILD, name, "true");
		}
		catalog_restore_user(&saved);
		if (in_place)
			ereport(NOTICE,
					(errmsg("index \"%s\" gains fields in place: its documents are rebuilt where they are served, with no seed",
							name),
					 errdetail("flusso_status() counts the documents still to rebuild; flusso_wait() returns true once they are.")));
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
	CatalogUser saved;
	Oid			owner;

	flusso_require_admin();

	SPI_connect();
	catalog_become_owner(&saved);
	owner = catalog_lock_index(name);
	catalog_restore_user(&saved);
	if (!OidIsValid(owner))
		index_report_missing(name);
	flusso_require_owner(owner, name);
	/* the sinks, as they were, kept beyond SPI */
	spi = MemoryContextSwitchTo(context);
	sink = sink_for_index(name, owner, NULL);
	MemoryContextSwitchTo(spi);

	catalog_become_owner(&saved);
	(void) catalog_delete_index(name);
	catalog_forget_signals(name);
	catalog_forget_seed(name);
	/* the last index gone: the worker drops its slot, nothing retains WAL */
	request_worker_at_commit(catalog_has_indexes());
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
		schema = catalog_load_index(name)->schema;
	else
		schema = index_parse_definition(arg)->schema;
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in,
										CStringGetDatum(schema_mapping_json(schema))));
}

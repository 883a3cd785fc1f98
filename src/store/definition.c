/*-------------------------------------------------------------------------
 *
 * definition.c
 *	  Validating index definition text into a schema, its canonical form and
 *	  version: what a row of flusso.index holds (catalog_index.c stores and
 *	  loads it).
 *
 * The schema core returns errors as values; this is where they become
 * ereport()s, with the path in the message and the suggestion as a hint.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"

#include "compat.h"
#include "document/raw_filter.h"
#include "store/definition.h"

/* hex digits of the canonical form's SHA-256 kept as the version */
#define VERSION_HEX_DIGITS 16

static void
report_schema_error(const SchemaError *error)
{
	ereport(ERROR,
			(errcode(error->syntax ? ERRCODE_INVALID_TEXT_REPRESENTATION
					 : ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid index definition: %s%s%s",
					error->path, error->path[0] ? ": " : "", error->message),
			 error->hint ? errhint("%s", error->hint) : 0));
}

static char *
version_of(const char *canonical)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	char	   *hex = palloc(VERSION_HEX_DIGITS + 1);

	if (pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) canonical, strlen(canonical)) < 0 ||
		pg_cryptohash_final(ctx, digest, sizeof(digest)) < 0)
		elog(ERROR, "could not compute SHA-256 of an index definition: %s",
			 pg_cryptohash_error(ctx));
	pg_cryptohash_free(ctx);

	for (int i = 0; i < VERSION_HEX_DIGITS / 2; i++)
		sprintf(hex + 2 * i, "%02x", digest[i]);
	return hex;
}

/* Validate definition text, raising the schema error if it has one. */
ParsedDefinition *
index_parse_definition(const text *definition)
{
	ParsedDefinition *parsed = palloc0(sizeof(ParsedDefinition));
	SchemaError *error = NULL;

	parsed->schema = schema_parse(VARDATA_ANY(definition),
								  VARSIZE_ANY_EXHDR(definition),
								  GetDatabaseEncoding(), &error);
	if (parsed->schema == NULL)
		report_schema_error(error);
	parsed->canonical = schema_canonical_json(parsed->schema);
	parsed->version = version_of(parsed->canonical);
	return parsed;
}

static void
check_filters(const SchemaFilterList *filters, const char *path)
{
	for (int i = 0; i < filters->nfilters; i++)
	{
		if (filters->filters[i].op == FILTER_RAW)
			doc_check_raw_filter(filters->filters[i].raw, psprintf("%s[%d]", path, i));
	}
}

static void
check_field_filters(const SchemaFieldList *fields)
{
	for (int i = 0; i < fields->nfields; i++)
	{
		const SchemaField *field = fields->fields[i];

		if (field->kind == FIELD_JOIN || field->kind == FIELD_AGGREGATE)
			check_filters(&field->filters, psprintf("%s.filters", field->path));
		if (field->kind == FIELD_JOIN || field->kind == FIELD_OBJECT)
			check_field_filters(&field->children);
	}
}

/*
 * Refuse a definition whose raw filters are not single SQL expressions.
 * Only definitions being created are checked here: a stored one that
 * fails is refused when its statement is built, and goes to phase error.
 */
void
index_check_raw_filters(const IndexSchema *schema)
{
	check_filters(&schema->filters, "filters");
	if (schema->soft_delete)
		check_filters(&schema->soft_delete->when, "soft_delete.when");
	check_field_filters(&schema->fields);
}

/* Raise the error every SQL function gives for an unknown index name. */
void
index_report_missing(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("index \"%s\" does not exist", name),
			 errhint("SELECT name FROM flusso_indexes lists the indexes.")));
}

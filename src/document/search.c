/*-------------------------------------------------------------------------
 *
 * search.c
 *	  The tsvector kept beside each document in the table sink, and
 *	  flusso_search(name, query).
 *
 * The vector holds the values of the index's text and identifier fields,
 * wherever they sit in the document (nested objects and arrays included),
 * with the language-neutral 'simple' configuration: documents mix languages
 * and identifiers, and stemming one language would mangle the others.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"

#include "document/search.h"
#include "flusso.h"
#include "index/access.h"
#include "index/definition.h"

PG_FUNCTION_INFO_V1(flusso_search);

/* Collect JSON paths ("$.reviews[*].body") of text and identifier fields. */
static void
collect_paths(const SchemaFieldList *fields, const char *prefix, List **paths)
{
	for (int i = 0; i < fields->nfields; i++)
	{
		const SchemaField *f = fields->fields[i];
		char	   *path = psprintf("%s.\"%s\"", prefix, f->name);

		if (f->kind == FIELD_SCALAR && (f->type == ST_TEXT || f->type == ST_IDENTIFIER))
			*paths = lappend(*paths, path);
		else if (f->kind == FIELD_OBJECT)
			collect_paths(&f->children, path, paths);
		else if (f->kind == FIELD_JOIN)
			collect_paths(&f->children,
						  schema_join_is_to_many(f->join) ? psprintf("%s[*]", path) : path,
						  paths);
	}
}

/* The tsvector of the document expression doc; '' when nothing is text. */
char *
doc_search_expr(const IndexSchema *schema, const char *doc)
{
	List	   *paths = NIL;
	StringInfoData buf;
	ListCell   *lc;

	collect_paths(&schema->fields, "$", &paths);
	if (paths == NIL)
		return pstrdup("''::pg_catalog.tsvector");
	initStringInfo(&buf);
	appendStringInfo(&buf, "pg_catalog.to_tsvector('%s'::pg_catalog.regconfig, "
					 "COALESCE((SELECT pg_catalog.string_agg(v OPERATOR(pg_catalog.#>>) '{}', ' ') FROM (", SEARCH_CONFIG);
	foreach(lc, paths)
		appendStringInfo(&buf, "%sSELECT pg_catalog.jsonb_path_query(%s, %s) AS v",
						 lc == list_head(paths) ? "" : " UNION ALL ", doc,
						 quote_literal_cstr(lfirst(lc)));
	appendStringInfoString(&buf, ") t WHERE pg_catalog.jsonb_typeof(v) OPERATOR(pg_catalog.=) 'string'), ''))");
	return buf.data;
}

/*
 * flusso_search(name text, query text) RETURNS TABLE(id text, doc jsonb,
 * rank real): documents matching a web-search style query over the text
 * and identifier fields, best first.
 */
Datum
flusso_search(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {PointerGetDatum(PG_GETARG_TEXT_PP(1))};
	char	   *sql;

	flusso_require_admin();
	InitMaterializedSRF(fcinfo, 0);
	flusso_require_reader(index_load(name)->owner, name);
	sql = psprintf("SELECT d.id, d.doc, pg_catalog.ts_rank(d.search, q) AS rank "
				   "FROM %s d, pg_catalog.websearch_to_tsquery('%s'::pg_catalog.regconfig, $1) q "
				   "WHERE d.search OPERATOR(pg_catalog.@@) q ORDER BY rank DESC, d.id",
				   quote_qualified_identifier(FLUSSO_DOCS_SCHEMA, name), SEARCH_CONFIG);
	SPI_connect();
	if (SPI_execute_with_args(sql, 1, types, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not search index \"%s\"", name);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[i];
		Datum		row[3];
		bool		nulls[3];

		for (int c = 0; c < 3; c++)
			row[c] = SPI_getbinval(tuple, SPI_tuptable->tupdesc, c + 1, &nulls[c]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row, nulls);
	}
	SPI_finish();
	return (Datum) 0;
}

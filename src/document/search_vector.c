/*-------------------------------------------------------------------------
 *
 * search_vector.c
 *	  The tsvector kept beside each document in the table sink, over which
 *	  flusso_search() searches.
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

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/builtins.h"

#include "document/search_vector.h"

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

/*-------------------------------------------------------------------------
 *
 * preview.c
 *	  flusso_preview(definition, id): the document a definition that has
 *	  not been created would build for one root key now, or NULL when the
 *	  key builds none.  (flusso_mapping takes such a definition as well:
 *	  api/index.c.)
 *
 * There is no owner yet, so the document is built as the role calling,
 * with its own rights, under the conditions every document is built under
 * (document/session.c), by the statement and the code flusso_build() uses.
 * Before any row is read, the definition is walked as flusso_check() walks
 * an index, and the caller must be able to read every table and column it
 * reads: the error names the table or column, never a value.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "binding/ready.h"
#include "document/build.h"
#include "document/by_id.h"
#include "store/catalog_index.h"
#include "util/access.h"

PG_FUNCTION_INFO_V1(flusso_preview);

/* flusso_preview(definition text, id text) RETURNS jsonb */
Datum
flusso_preview(PG_FUNCTION_ARGS)
{
	text	   *definition = PG_GETARG_TEXT_PP(0);
	char	   *id = text_to_cstring(PG_GETARG_TEXT_PP(1));
	ParsedDefinition *parsed;
	Jsonb	   *doc;

	flusso_require_admin();
	parsed = index_parse_definition(definition);
	index_check_raw_filters(parsed->schema);
	bind_definition_ready(parsed->schema, GetUserId());
	doc = doc_build_one(doc_build_query(parsed->schema), GetUserId(), id, NULL);
	if (doc == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(doc);
}

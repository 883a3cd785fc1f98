/*-------------------------------------------------------------------------
 *
 * build_one.c
 *	  flusso_build(name, id): the document an index builds for one root key
 *	  now, or NULL when that key builds none (no row, filtered out,
 *	  soft-deleted).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "document/build.h"
#include "document/by_id.h"
#include "store/catalog_index.h"
#include "util/access.h"

PG_FUNCTION_INFO_V1(flusso_build);

/* flusso_build(name text, id text) RETURNS jsonb */
Datum
flusso_build(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *id = text_to_cstring(PG_GETARG_TEXT_PP(1));
	StoredIndex *index;
	Jsonb	   *doc;

	flusso_require_admin();
	index = catalog_load_index(name);
	flusso_require_reader(index->owner, name);
	doc = doc_build_one(doc_build_query(index->schema), index->owner, id, name);
	if (doc == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(doc);
}

/*-------------------------------------------------------------------------
 *
 * preview.c
 *	  flusso_build(name, id): the document an index builds for one root key
 *	  now, or NULL when that key builds none (no row, filtered out,
 *	  soft-deleted).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "document/build.h"
#include "document/docid.h"
#include "document/session.h"
#include "index/access.h"
#include "index/definition.h"

PG_FUNCTION_INFO_V1(flusso_build);

/* flusso_build(name text, id text) RETURNS jsonb */
Datum
flusso_build(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *id = text_to_cstring(PG_GETARG_TEXT_PP(1));
	StoredIndex *index;
	DocumentQuery *query;
	BuildSession session;
	MemoryContext caller = CurrentMemoryContext;
	Jsonb	   *doc = NULL;
	char	  **parts;

	flusso_require_admin();
	index = index_load(name);
	flusso_require_reader(index->owner, name);
	query = doc_build_query(index->schema);

	parts = palloc(sizeof(char *) * query->nkeys);
	if (!doc_id_split(id, query->nkeys, parts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("document id \"%s\" does not have the %d parts of the key of index \"%s\"",
						id, query->nkeys, name),
				 errhint("A composite id joins its key values with \":\", and escapes a \":\" or \"\\\" inside a value with \"\\\".")));
	for (int i = 0; i < query->nkeys; i++)
	{
		Datum		value = CStringGetTextDatum(parts[i]);

		query->param_values[query->nparams + i] =
			PointerGetDatum(construct_array(&value, 1, TEXTOID, -1, false, TYPALIGN_INT));
	}

	doc_session_begin(&session, index->owner);
	SPI_connect();
	if (SPI_execute_with_args(query->sql, query->nparams + query->nkeys, query->param_types,
							  query->param_values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not build a document of index \"%s\"", name);
	if (SPI_processed == 1)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);

		if (!isnull)
			doc = (Jsonb *) SPI_datumTransfer(d, false, -1);
	}
	SPI_finish();
	doc_session_end(&session);
	MemoryContextSwitchTo(caller);

	if (doc == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(doc);
}

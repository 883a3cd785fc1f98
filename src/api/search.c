/*-------------------------------------------------------------------------
 *
 * search.c
 *	  flusso_search(name, query): documents of an index matching a
 *	  web-search style query over its text and identifier fields, best
 *	  first, for those who may read them.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "document/search_vector.h"
#include "settings.h"
#include "store/catalog_index.h"
#include "sink/sink.h"
#include "util/access.h"

PG_FUNCTION_INFO_V1(flusso_search);

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
	StoredIndex *index;

	flusso_require_admin();
	InitMaterializedSRF(fcinfo, 0);
	index = catalog_load_index(name);
	flusso_require_reader(index->owner, name);
	if (!sink_for_index(name, index->owner, NULL)->table)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" has no table sink to search", name),
				 errhint("Search its OpenSearch alias, or add the table sink: SELECT flusso_set_sinks('%s', ARRAY['table', ...]);",
						 name)));
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

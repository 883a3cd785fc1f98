/*-------------------------------------------------------------------------
 *
 * verify.c
 *	  flusso_verify(name): every stored document of an index against a
 *	  fresh build from the current rows.  Returns one row per document that
 *	  is missing (builds but is not stored), extra (stored but builds
 *	  nothing) or different; nothing when all agree.
 *
 * Built as the index's owner under the pinned settings, like the worker
 * builds, so the comparison is of equal things.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"

#include "document/build.h"
#include "document/session.h"
#include "flusso.h"
#include "index/access.h"
#include "index/definition.h"

PG_FUNCTION_INFO_V1(flusso_verify);

/* SELECT array_agg(k1::text), ... FROM root: every root key, aligned. */
static char *
all_keys_sql(const IndexSchema *schema, const DocumentQuery *q)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "SELECT ");
	for (int k = 0; k < q->nkeys; k++)
		appendStringInfo(&buf, "%sCOALESCE(pg_catalog.array_agg(%s::pg_catalog.text), '{}')",
						 k ? ", " : "", quote_identifier(q->key_columns[k]));
	appendStringInfo(&buf, " FROM %s", quote_qualified_identifier(schema->namespace, schema->table));
	return buf.data;
}

/* flusso_verify(name text) RETURNS TABLE(id text, problem text) */
Datum
flusso_verify(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	StoredIndex *index;
	DocumentQuery *q;
	BuildSession session;
	Datum	   *values;
	char	   *sql;

	flusso_require_admin();
	InitMaterializedSRF(fcinfo, 0);
	index = index_load(name);
	flusso_require_reader(index->owner, name);
	q = doc_build_query(index->schema);
	sql = psprintf("WITH built AS (%s) "
				   "SELECT COALESCE(b.id, s.id), CASE WHEN s.id IS NULL THEN 'missing' "
				   "WHEN b.id IS NULL THEN 'extra' ELSE 'different' END "
				   "FROM built b FULL JOIN %s s ON s.id OPERATOR(pg_catalog.=) b.id "
				   "WHERE s.id IS NULL OR b.id IS NULL OR s.doc IS DISTINCT FROM b.doc "
				   "ORDER BY 1",
				   q->sql, quote_qualified_identifier(FLUSSO_DOCS_SCHEMA, name));

	doc_session_begin(&session, index->owner);
	SPI_connect();
	if (SPI_execute(all_keys_sql(index->schema, q), true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the keys of index \"%s\"", name);
	values = palloc(sizeof(Datum) * (q->nparams + q->nkeys));
	memcpy(values, q->param_values, sizeof(Datum) * q->nparams);
	for (int k = 0; k < q->nkeys; k++)
	{
		bool		isnull;

		values[q->nparams + k] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
											   k + 1, &isnull);
	}
	if (SPI_execute_with_args(sql, q->nparams + q->nkeys, q->param_types, values,
							  NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not verify index \"%s\"", name);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		Datum		row[2];
		bool		nulls[2] = {false, false};

		row[0] = CStringGetTextDatum(SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
		row[1] = CStringGetTextDatum(SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row, nulls);
	}
	SPI_finish();
	doc_session_end(&session);
	return (Datum) 0;
}

/*-------------------------------------------------------------------------
 *
 * verify.c
 *	  flusso_verify(name): every stored document of an index, in each of its
 *	  sinks, against a fresh build from the current rows.  Returns one row
 *	  per document that is missing (builds but is not stored), extra
 *	  (stored but builds nothing) or different, with the sink; nothing when
 *	  all agree.
 *
 * Built as the index's owner under the pinned settings, like the worker
 * builds, so the comparison is of equal things.  The OpenSearch part is
 * verify_opensearch.c's.  The library may be newer than the SQL objects
 * (before ALTER EXTENSION UPDATE): the sink column is filled only when the
 * function declares it.
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

#include "api/verify_build.h"
#include "api/verify_opensearch.h"
#include "document/build.h"
#include "document/session.h"
#include "settings.h"
#include "store/catalog_index.h"
#include "sink/sink.h"
#include "util/access.h"

PG_FUNCTION_INFO_V1(flusso_verify);

/* The table sink: a full join of a fresh build and the documents table. */
static void
verify_table(ReturnSetInfo *rsinfo, const StoredIndex *index, const DocumentQuery *q,
			 bool repair)
{
	BuildSession session;
	char	   *sql;

	sql = psprintf("WITH built AS (%s) "
				   "SELECT COALESCE(b.id, s.id), CASE WHEN s.id IS NULL THEN 'missing' "
				   "WHEN b.id IS NULL THEN 'extra' ELSE 'different' END "
				   "FROM built b FULL JOIN %s s ON s.id OPERATOR(pg_catalog.=) b.id "
				   "WHERE s.id IS NULL OR b.id IS NULL OR s.doc IS DISTINCT FROM b.doc "
				   "ORDER BY 1",
				   q->sql, quote_qualified_identifier(FLUSSO_DOCS_SCHEMA, index->name));
	verify_build_all(index, q, sql, &session);
	for (uint64 i = 0; i < SPI_processed; i++)
		verify_emit(rsinfo, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1),
					SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2), "table");
	/* only the worker writes the documents table, in the build's transaction */
	if (repair && SPI_processed > 0)
		ereport(NOTICE,
				(errmsg("the table sink of index \"%s\" is not repaired here", index->name),
				 errdetail("Only the worker writes its documents, in the transaction that reads their rows."),
				 errhint("SELECT flusso_resnapshot('%s') builds them all again.", index->name)));
	SPI_finish();
	doc_session_end(&session);
}

/*
 * flusso_verify(name text, repair boolean DEFAULT false)
 *		RETURNS TABLE(id text, problem text, sink text)
 *
 * Repairing writes to OpenSearch with the owner's credentials: it takes
 * the owner's rights, as flusso_resnapshot() does; reading, a reader's.
 * (Before ALTER EXTENSION UPDATE to 0.9.0 it takes the name alone.)
 */
Datum
flusso_verify(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		repair = PG_NARGS() > 1 && PG_GETARG_BOOL(1);
	StoredIndex *index;
	DocumentQuery *q;
	IndexSink  *sink;

	flusso_require_admin();
	InitMaterializedSRF(fcinfo, 0);
	index = catalog_load_index(name);
	if (repair)
		flusso_require_owner(index->owner, name);
	else
		flusso_require_reader(index->owner, name);
	q = doc_build_query(index->schema);
	/* before ALTER EXTENSION UPDATE, flusso.sink is not there: the table alone */
	if (rsinfo->setDesc->natts < 3)
	{
		verify_table(rsinfo, index, q, false);
		return (Datum) 0;
	}
	sink = sink_for_index(name, index->owner, index->schema);
	if (sink->table)
		verify_table(rsinfo, index, q, repair);
	if (sink->server)
		verify_opensearch(rsinfo, index, q, repair);
	return (Datum) 0;
}

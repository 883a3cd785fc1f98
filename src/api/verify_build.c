/*-------------------------------------------------------------------------
 *
 * verify_build.c
 *	  What flusso_verify() compares each sink with: a fresh build of every
 *	  document of an index, as its owner under the pinned settings (as the
 *	  worker builds), and the rows it returns.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"

#include "api/verify_build.h"

/* SELECT array_agg(k1::text), ... FROM root: every root key, aligned. */
static char *
all_keys_sql(const DocumentQuery *q)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "SELECT ");
	for (int k = 0; k < q->nkeys; k++)
		appendStringInfo(&buf, "%sCOALESCE(pg_catalog.array_agg(%s::pg_catalog.text), '{}')",
						 k ? ", " : "", quote_identifier(q->key_columns[k]));
	appendStringInfo(&buf, " FROM %s", q->root_from);
	return buf.data;
}

/*
 * Run sql, which starts "WITH built AS (<build statement>)", over every
 * root key, as the owner; the caller reads SPI_tuptable, and calls
 * SPI_finish() and doc_session_end() when done.
 */
void
verify_build_all(const StoredIndex *index, const DocumentQuery *q, const char *sql,
				 BuildSession *session)
{
	Datum	   *key_arrays;

	doc_session_begin(session, index->owner);
	SPI_connect();
	if (SPI_execute(all_keys_sql(q), true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the keys of index \"%s\"", index->name);
	key_arrays = palloc(sizeof(Datum) * Max(q->nkeys, 1));
	for (int k = 0; k < q->nkeys; k++)
	{
		bool		isnull;

		key_arrays[k] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
									  k + 1, &isnull);
	}
	if (SPI_execute_with_args(sql, q->nkeys + q->nparams, doc_query_param_types(q, 0),
							  doc_query_param_values(q, key_arrays, 0),
							  NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not verify index \"%s\"", index->name);
}

/* A row of the result: id, problem and, when declared, the sink. */
void
verify_emit(ReturnSetInfo *rsinfo, const char *id, const char *problem, const char *sink)
{
	Datum		row[3];
	bool		nulls[3] = {false, false, false};

	/* no id: a problem of the sink as a whole (an alias serving nothing) */
	nulls[0] = id == NULL;
	row[0] = id ? CStringGetTextDatum(id) : (Datum) 0;
	row[1] = CStringGetTextDatum(problem);
	row[2] = CStringGetTextDatum(sink);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row, nulls);
}

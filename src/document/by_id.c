/*-------------------------------------------------------------------------
 *
 * by_id.c
 *	  The documents of a list of ids, built from the current rows with the
 *	  index's build statement, as its owner, under the conditions every
 *	  document is built under (session.c): the ids are split into their
 *	  key parts, built in one statement, and joined back in order.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "document/by_id.h"
#include "document/docid.h"
#include "document/session.h"
#include "util/spi_cache.h"

/*
 * The documents of ids[0..n-1] as JSON text, in the caller's memory
 * context, in the order of ids; NULL for an id that builds nothing (its
 * row is gone or filtered out).
 */
char **
doc_build_ids(const DocumentQuery *q, Oid owner, char **ids, int n)
{
	MemoryContext caller = CurrentMemoryContext;
	int			nargs = q->nkeys + q->nparams + 1;
	Datum	   *key_arrays = palloc(sizeof(Datum) * Max(q->nkeys, 1));
	Datum	   *values;
	Oid		   *types = doc_query_param_types(q, 1);
	Datum	  **columns = palloc(sizeof(Datum *) * q->nkeys);
	Datum	   *id_values = palloc(sizeof(Datum) * Max(n, 1));
	char	  **parts = palloc(sizeof(char *) * q->nkeys);
	char	  **docs = palloc0(sizeof(char *) * Max(n, 1));
	char	   *sql;
	BuildSession session;

	for (int k = 0; k < q->nkeys; k++)
		columns[k] = palloc(sizeof(Datum) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		if (!doc_id_split(ids[i], q->nkeys, parts))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("document id \"%s\" does not have the %d parts of its index's key",
							ids[i], q->nkeys)));
		for (int k = 0; k < q->nkeys; k++)
			columns[k][i] = CStringGetTextDatum(parts[k]);
		id_values[i] = CStringGetTextDatum(ids[i]);
	}
	for (int k = 0; k < q->nkeys; k++)
		key_arrays[k] = PointerGetDatum(construct_array(columns[k], n, TEXTOID,
														-1, false, TYPALIGN_INT));
	values = doc_query_param_values(q, key_arrays, 1);
	values[nargs - 1] = PointerGetDatum(construct_array(id_values, n, TEXTOID,
														-1, false, TYPALIGN_INT));
	types[nargs - 1] = TEXTARRAYOID;

	sql = psprintf("WITH built AS (%s) SELECT b.doc::pg_catalog.text "
				   "FROM pg_catalog.unnest($%d::pg_catalog.text[]) WITH ORDINALITY u(id, n) "
				   "LEFT JOIN built b ON b.id OPERATOR(pg_catalog.=) u.id ORDER BY u.n",
				   q->sql, nargs);
	doc_session_begin(&session, owner);
	SPI_connect();
	if (spi_execute_by_keys(sql, n, nargs, types, values, true) != SPI_OK_SELECT ||
		SPI_processed != (uint64) n)
		elog(ERROR, "could not build documents by id");
	for (int i = 0; i < n; i++)
	{
		char	   *doc = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);

		docs[i] = doc ? MemoryContextStrdup(caller, doc) : NULL;
	}
	SPI_finish();
	doc_session_end(&session);
	return docs;
}

/*
 * The document of one id as jsonb, built as role (under the conditions
 * every document is built under), or NULL when the id builds none.  An id
 * without the parts of the key is an error, which names the index, or the
 * root table when there is no index yet (index_name NULL).
 */
Jsonb *
doc_build_one(const DocumentQuery *q, Oid role, const char *id, const char *index_name)
{
	Datum	   *key_arrays = palloc(sizeof(Datum) * Max(q->nkeys, 1));
	char	  **parts = palloc(sizeof(char *) * Max(q->nkeys, 1));
	BuildSession session;
	Jsonb	   *doc = NULL;

	if (!doc_id_split(id, q->nkeys, parts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 index_name
				 ? errmsg("document id \"%s\" does not have the %d parts of the key of index \"%s\"",
						  id, q->nkeys, index_name)
				 : errmsg("document id \"%s\" does not have the %d parts of the key of table %s",
						  id, q->nkeys, q->root_qualified),
				 errhint("A composite id joins its key values with \":\", and escapes a \":\" or \"\\\" inside a value with \"\\\".")));
	for (int i = 0; i < q->nkeys; i++)
	{
		Datum		value = CStringGetTextDatum(parts[i]);

		key_arrays[i] =
			PointerGetDatum(construct_array(&value, 1, TEXTOID, -1, false, TYPALIGN_INT));
	}

	doc_session_begin(&session, role);
	SPI_connect();
	if (SPI_execute_with_args(q->sql, q->nkeys + q->nparams, doc_query_param_types(q, 0),
							  doc_query_param_values(q, key_arrays, 0),
							  NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not build a document");
	if (SPI_processed == 1)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);

		if (!isnull)
			doc = (Jsonb *) SPI_datumTransfer(d, false, -1);
	}
	SPI_finish();
	doc_session_end(&session);
	return doc;
}

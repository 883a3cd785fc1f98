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

/*
 * The documents of ids[0..n-1] as JSON text, in the caller's memory
 * context, in the order of ids; NULL for an id that builds nothing (its
 * row is gone or filtered out).
 */
char **
doc_build_ids(const DocumentQuery *q, Oid owner, char **ids, int n)
{
	MemoryContext caller = CurrentMemoryContext;
	int			nargs = q->nparams + q->nkeys + 1;
	Datum	   *values = palloc(sizeof(Datum) * nargs);
	Oid		   *types = palloc(sizeof(Oid) * nargs);
	Datum	  **columns = palloc(sizeof(Datum *) * q->nkeys);
	Datum	   *id_values = palloc(sizeof(Datum) * Max(n, 1));
	char	  **parts = palloc(sizeof(char *) * q->nkeys);
	char	  **docs = palloc0(sizeof(char *) * Max(n, 1));
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
	memcpy(values, q->param_values, sizeof(Datum) * q->nparams);
	memcpy(types, q->param_types, sizeof(Oid) * (q->nparams + q->nkeys));
	for (int k = 0; k < q->nkeys; k++)
		values[q->nparams + k] = PointerGetDatum(construct_array(columns[k], n, TEXTOID,
																 -1, false, TYPALIGN_INT));
	values[nargs - 1] = PointerGetDatum(construct_array(id_values, n, TEXTOID,
														-1, false, TYPALIGN_INT));
	types[nargs - 1] = TEXTARRAYOID;

	doc_session_begin(&session, owner);
	SPI_connect();
	if (SPI_execute_with_args(psprintf("WITH built AS (%s) SELECT b.doc::pg_catalog.text "
									   "FROM pg_catalog.unnest($%d::pg_catalog.text[]) WITH ORDINALITY u(id, n) "
									   "LEFT JOIN built b ON b.id OPERATOR(pg_catalog.=) u.id ORDER BY u.n",
									   q->sql, nargs),
							  nargs, types, values, NULL, true, 0) != SPI_OK_SELECT ||
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

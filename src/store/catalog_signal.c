/*-------------------------------------------------------------------------
 *
 * catalog_signal.c
 *	  flusso.signal: requests (a re-snapshot, whole or of some documents, a
 *	  retry, a seed a DDL change calls for) and a seed's watermarks, inserted here and read by the
 *	  stream in commit order; every statement over the table, each written
 *	  once, as a verb.  The kinds are the signals module's
 *	  (signal/signal.h): a verb is given those it concerns.
 *
 * Each verb runs in the caller's role and transaction, in a SPI connection
 * of its own (nested in the caller's, if any); what it returns is
 * allocated in the caller's memory context.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/uuid.h"

#include "util/text_array.h"
#include "store/catalog_signal.h"

/*
 * Run a statement with up to two text arguments, $1 and $2, and kinds, a
 * NULL-terminated list of signal kinds, as a text[] after them.
 */
static void
run(const char *sql, int expected, const char *arg1, const char *arg2,
	const char *const *kinds)
{
	Oid			argtypes[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		values[3];
	int			nargs = 0;

	if (arg1)
		values[nargs++] = CStringGetTextDatum(arg1);
	if (arg2)
		values[nargs++] = CStringGetTextDatum(arg2);
	if (kinds)
	{
		int			n = 0;

		while (kinds[n])
			n++;
		argtypes[nargs] = TEXTARRAYOID;
		values[nargs++] = text_array_from_strings((char **) kinds, n);
	}
	SPI_connect();
	if (SPI_execute_with_args(sql, nargs, argtypes, values, NULL, false, 0) != expected)
		elog(ERROR, "could not run \"%s\"", sql);
	SPI_finish();
}

/*
 * Insert a request of kind for index name, with what it is about (detail,
 * or NULL: flusso.signal has the column from 0.11.0 on); its id (a uuid).
 */
Datum
catalog_insert_request(const char *kind, const char *name, const char *detail)
{
	Oid			argtypes[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		values[3] = {CStringGetTextDatum(kind), CStringGetTextDatum(name),
	detail ? CStringGetTextDatum(detail) : (Datum) 0};
	bool		isnull;
	Datum		id;

	SPI_connect();
	if (SPI_execute_with_args(detail
							  ? "INSERT INTO flusso.signal (kind, index_name, detail) VALUES ($1, $2, $3) RETURNING id"
							  : "INSERT INTO flusso.signal (kind, index_name) VALUES ($1, $2) RETURNING id",
							  detail ? 3 : 2, argtypes, values, NULL, false, 1) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not insert a %s request for index \"%s\"", kind, name);
	id = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	id = SPI_datumTransfer(id, false, UUID_LEN);
	SPI_finish();
	return id;
}

/* Insert a request of kind for each index named. */
void
catalog_insert_requests(const char *kind, List *names)
{
	char	  **array = palloc(sizeof(char *) * list_length(names));
	int			n = 0;
	Oid			argtypes[2] = {TEXTOID, TEXTARRAYOID};
	Datum		values[2];
	ListCell   *lc;

	foreach(lc, names)
		array[n++] = lfirst(lc);
	values[0] = CStringGetTextDatum(kind);
	values[1] = text_array_from_strings(array, n);
	SPI_connect();
	if (SPI_execute_with_args("INSERT INTO flusso.signal (kind, index_name) "
							  "SELECT $1, pg_catalog.unnest($2)",
							  2, argtypes, values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not request a seed of the indexes a change touched");
	SPI_finish();
}

/* Insert a watermark of kind for index name; its id, as text. */
char *
catalog_insert_watermark(const char *kind, const char *name)
{
	MemoryContext caller = CurrentMemoryContext;
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(kind), CStringGetTextDatum(name)};
	char	   *id;

	SPI_connect();
	if (SPI_execute_with_args("INSERT INTO flusso.signal (kind, index_name) VALUES ($1, $2) "
							  "RETURNING id::pg_catalog.text",
							  2, argtypes, values, NULL, false, 1) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not insert a %s watermark", kind);
	id = MemoryContextStrdup(caller, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));
	SPI_finish();
	return id;
}

/* Forget the signal of this id, acted on. */
void
catalog_forget_signal(const char *id)
{
	run("DELETE FROM flusso.signal WHERE id::pg_catalog.text OPERATOR(pg_catalog.=) $1",
		SPI_OK_DELETE, id, NULL, NULL);
}

/* Forget the signal of this id if it is of one of kinds (NULL-terminated). */
void
catalog_forget_signal_of_kinds(const char *id, const char *const *kinds)
{
	run("DELETE FROM flusso.signal WHERE id::pg_catalog.text OPERATOR(pg_catalog.=) $1 "
		"AND kind OPERATOR(pg_catalog.=) ANY ($2)",
		SPI_OK_DELETE, id, NULL, kinds);
}

/* Forget the pair of watermarks of a chunk. */
void
catalog_forget_watermarks(const char *low, const char *high)
{
	run("DELETE FROM flusso.signal WHERE id::pg_catalog.text "
		"OPERATOR(pg_catalog.=) ANY (ARRAY[$1, $2])",
		SPI_OK_DELETE, low, high, NULL);
}

/* Forget every signal of one of kinds (NULL-terminated). */
void
catalog_forget_signals_of_kinds(const char *const *kinds)
{
	run("DELETE FROM flusso.signal WHERE kind OPERATOR(pg_catalog.=) ANY ($1)",
		SPI_OK_DELETE, NULL, NULL, kinds);
}

/* Forget every signal of index name. */
void
catalog_forget_signals(const char *name)
{
	run("DELETE FROM flusso.signal WHERE index_name OPERATOR(pg_catalog.=) $1",
		SPI_OK_DELETE, name, NULL, NULL);
}

/*
 * Forget the requests of one of kinds (NULL-terminated) that a seed of
 * index name answered: those that arrived before it started (flusso.seed
 * keeps when).
 */
void
catalog_forget_answered_signals(const char *name, const char *const *kinds)
{
	run("DELETE FROM flusso.signal WHERE kind OPERATOR(pg_catalog.=) ANY ($2) "
		"AND index_name OPERATOR(pg_catalog.=) $1 AND created_at OPERATOR(pg_catalog.<=) "
		"(SELECT started_at FROM flusso.seed WHERE index_name OPERATOR(pg_catalog.=) $1)",
		SPI_OK_DELETE, name, NULL, kinds);
}

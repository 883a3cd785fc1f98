/*-------------------------------------------------------------------------
 *
 * catalog_signal.c
 *	  flusso.signal: requests (a re-snapshot, a retry, a seed a DDL change
 *	  calls for) and a seed's watermarks, inserted here and read by the
 *	  stream in commit order; every statement over the table, each written
 *	  once, as a verb.
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

/* Run a statement with up to two text arguments, $1 and $2. */
static void
run(const char *sql, int expected, const char *arg1, const char *arg2)
{
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		values[2];
	int			nargs = 0;

	if (arg1)
		values[nargs++] = CStringGetTextDatum(arg1);
	if (arg2)
		values[nargs++] = CStringGetTextDatum(arg2);
	SPI_connect();
	if (SPI_execute_with_args(sql, nargs, argtypes, values, NULL, false, 0) != expected)
		elog(ERROR, "could not run \"%s\"", sql);
	SPI_finish();
}

/* Insert a request of kind for index name; its id (a uuid). */
Datum
catalog_insert_request(const char *kind, const char *name)
{
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(kind), CStringGetTextDatum(name)};
	bool		isnull;
	Datum		id;

	SPI_connect();
	if (SPI_execute_with_args("INSERT INTO flusso.signal (kind, index_name) VALUES ($1, $2) RETURNING id",
							  2, argtypes, values, NULL, false, 1) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not insert a %s request for index \"%s\"", kind, name);
	id = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	id = SPI_datumTransfer(id, false, UUID_LEN);
	SPI_finish();
	return id;
}

/*
 * Can the database's flusso.signal hold a request of kind?  Its objects
 * may be older than the library (ALTER EXTENSION flusso UPDATE not run
 * yet), and a row its CHECK rejects would fail the user's commit.
 */
bool
catalog_signal_kind_accepted(const char *kind)
{
	int			major = 0;
	int			minor = 0;
	char	   *version;
	bool		accepted = true;

	SPI_connect();
	if (SPI_execute("SELECT extversion FROM pg_catalog.pg_extension "
					"WHERE extname OPERATOR(pg_catalog.=) 'flusso'", true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the version of extension \"flusso\"");
	version = SPI_processed == 1
		? SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1) : NULL;
	if (version == NULL || sscanf(version, "%d.%d", &major, &minor) != 2)
		accepted = false;
	else if (strcmp(kind, SIGNAL_ALTERED) == 0)
		accepted = major > 0 || minor >= 5;
	else if (strcmp(kind, SIGNAL_PARTITIONS) == 0)
		accepted = major > 0 || minor >= 4;
	SPI_finish();
	return accepted;
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
		SPI_OK_DELETE, id, NULL);
}

/* Forget the signal of this id if it is a watermark (of no seed now). */
void
catalog_forget_stale_watermark(const char *id)
{
	run("DELETE FROM flusso.signal WHERE id::pg_catalog.text OPERATOR(pg_catalog.=) $1 "
		"AND kind OPERATOR(pg_catalog.=) ANY (ARRAY['" SIGNAL_LOW "', '" SIGNAL_HIGH "'])",
		SPI_OK_DELETE, id, NULL);
}

/* Forget the pair of watermarks of a chunk. */
void
catalog_forget_watermarks(const char *low, const char *high)
{
	run("DELETE FROM flusso.signal WHERE id::pg_catalog.text "
		"OPERATOR(pg_catalog.=) ANY (ARRAY[$1, $2])",
		SPI_OK_DELETE, low, high);
}

/* Forget every watermark: those of an earlier run count for nothing. */
void
catalog_forget_all_watermarks(void)
{
	SPI_connect();
	if (SPI_execute("DELETE FROM flusso.signal WHERE kind OPERATOR(pg_catalog.=) "
					"ANY (ARRAY['" SIGNAL_LOW "', '" SIGNAL_HIGH "'])",
					false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete old watermarks");
	SPI_finish();
}

/* Forget every signal of index name. */
void
catalog_forget_signals(const char *name)
{
	run("DELETE FROM flusso.signal WHERE index_name OPERATOR(pg_catalog.=) $1",
		SPI_OK_DELETE, name, NULL);
}

/*
 * Forget the requests a seed of index name answered: those that arrived
 * before it started (flusso.seed keeps when).
 */
void
catalog_forget_answered_signals(const char *name)
{
	run("DELETE FROM flusso.signal WHERE kind OPERATOR(pg_catalog.=) "
		"ANY (ARRAY['" SIGNAL_RESNAPSHOT "', '" SIGNAL_PARTITIONS "', '" SIGNAL_ALTERED "']) "
		"AND index_name OPERATOR(pg_catalog.=) $1 AND created_at OPERATOR(pg_catalog.<=) "
		"(SELECT started_at FROM flusso.seed WHERE index_name OPERATOR(pg_catalog.=) $1)",
		SPI_OK_DELETE, name, NULL);
}

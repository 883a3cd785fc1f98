/*-------------------------------------------------------------------------
 *
 * matching.c
 *	  The documents a partial re-snapshot rebuilds: those of the root rows
 *	  a predicate selects (flusso_resnapshot(name, predicate => ...)), or
 *	  those of a list of document ids (ids => ...).
 *
 * A predicate is held to a raw filter's rules (document/raw_filter.c: one
 * SQL expression, nothing that escapes its parentheses) and is read as
 * the index's owner under the pinned settings (document/session.c), like
 * every statement a definition makes.  It is bound when the request is
 * made, in the caller's session, so that a predicate that does not apply
 * to the root table (a column it lacks, a value that is not boolean) is
 * refused then, with nothing recorded; the worker reads the ids it
 * selects later, through a cursor, so that any number of them is read in
 * bounded memory.  A row whose key is null has no document, and is left
 * out.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "document/docid.h"
#include "document/keyset.h"
#include "document/matching.h"
#include "document/raw_filter.h"
#include "document/session.h"
#include "util/attempt.h"

/* ids read from the cursor at a time */
#define MATCHING_FETCH 10000

/*
 * "SELECT <id> FROM <root> r WHERE r.k1 IS NOT NULL ... AND (<predicate>
 * )": the line break before the closing parenthesis keeps a trailing "--"
 * comment from swallowing it.
 */
static char *
matching_sql(const DocumentQuery *q, const char *predicate)
{
	StringInfoData sql;
	char	  **refs = palloc(sizeof(char *) * q->nkeys);

	for (int k = 0; k < q->nkeys; k++)
		refs[k] = psprintf("r.%s", quote_identifier(q->key_columns[k]));
	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT %s FROM %s r WHERE %s AND (%s\n)", doc_id_sql(refs, q->nkeys),
					 q->root_from, doc_keys_not_null_sql(q), predicate);
	return sql.data;
}

typedef struct Binding
{
	const char *sql;
	Oid			owner;
} Binding;

/*
 * Run the statement as the owner, for no row: it must apply to the root
 * table, and the owner read every table it names (checked as the executor
 * starts, before a row is read).
 */
static void
bind_predicate(void *arg)
{
	Binding    *b = arg;
	BuildSession session;

	doc_session_begin(&session, b->owner);
	SPI_connect();
	if (SPI_execute(psprintf("%s LIMIT 0", b->sql), true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not run \"%s\"", b->sql);
	SPI_finish();
	doc_session_end(&session);
}

/*
 * Raise an error, with nothing done, when predicate is not one SQL
 * expression, or does not apply to the root table of the index name as its
 * owner may read it.
 */
void
doc_check_predicate(const DocumentQuery *q, Oid owner, const char *predicate,
					const char *name)
{
	char	   *problem = doc_raw_filter_problem(predicate);
	Binding		b = {matching_sql(q, predicate), owner};
	ErrorData  *error;

	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the predicate of a re-snapshot of index \"%s\" is not one SQL expression: %s",
						name, problem),
				 errhint("A predicate is a single boolean expression over the columns of %s, such as \"country = 'NL' AND NOT hidden\".",
						 q->root_qualified)));
	if (!attempt_error(bind_predicate, &b, &error))
		ereport(ERROR,
				(errcode(error->sqlerrcode),
				 errmsg("the predicate of a re-snapshot of index \"%s\" does not apply to %s: %s",
						name, q->root_qualified, error->message),
				 errdetail("It is read as the index's owner, with search_path pg_catalog, pg_temp: a table or function it names must be schema-qualified."),
				 errhint("A predicate is a single boolean expression over the columns of %s, such as \"country = 'NL' AND NOT hidden\".",
						 q->root_qualified)));
}

/*
 * Call each(id, arg) for the id of every document of a root row predicate
 * selects now, as the owner, in the caller's transaction.  An id lasts
 * until each returns.
 */
void
doc_ids_matching(const DocumentQuery *q, Oid owner, const char *predicate,
				 void (*each) (const char *id, void *arg), void *arg)
{
	MemoryContext fetch_context = AllocSetContextCreate(CurrentMemoryContext,
														"flusso matching ids",
														ALLOCSET_DEFAULT_SIZES);
	char	   *sql = matching_sql(q, predicate);
	BuildSession session;
	Portal		portal;

	doc_session_begin(&session, owner);
	SPI_connect();
	portal = SPI_cursor_open_with_args(NULL, sql, 0, NULL, NULL, NULL, true, 0);
	for (;;)
	{
		MemoryContext spi;

		SPI_cursor_fetch(portal, true, MATCHING_FETCH);
		if (SPI_processed == 0)
			break;
		spi = MemoryContextSwitchTo(fetch_context);
		for (uint64 row = 0; row < SPI_processed; row++)
			each(SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, 1), arg);
		MemoryContextSwitchTo(spi);
		MemoryContextReset(fetch_context);
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	doc_session_end(&session);
	MemoryContextDelete(fetch_context);
}

/*
 * Raise an error, with nothing done, unless each of the n ids (NULL for a
 * null element) is a document id of an index whose root key has nkeys
 * columns.
 */
void
doc_check_ids(char **ids, int n, int nkeys, const char *name)
{
	char	  **parts = palloc(sizeof(char *) * nkeys);

	for (int i = 0; i < n; i++)
	{
		if (ids[i] == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("the ids of a re-snapshot of index \"%s\" hold a null", name)));
		if (!doc_id_split(ids[i], nkeys, parts))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("\"%s\" is not a document id of index \"%s\"", ids[i], name),
					 errdetail("The root key of the index has %d columns: an id joins their values with ':', each ':' and '\\' inside a value escaped with '\\'.",
							   nkeys)));
	}
}

/*-------------------------------------------------------------------------
 *
 * test_statements.c
 *	  Tests only, in the build `make test` installs (FLUSSO_TEST_HOOKS): the
 *	  statements flusso generates for an index, as the worker generates
 *	  them, for pg_regress to show (test/sql/statements.sql), the way
 *	  postgres_fdw's tests show the SQL they send.  No SQL script creates
 *	  the function: the test does, and a release build has no such symbol.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef FLUSSO_TEST_HOOKS

#include "fmgr.h"
#include "utils/builtins.h"

#include "document/build.h"
#include "sink/sink.h"
#include "store/catalog_index.h"
#include "util/access.h"

PG_FUNCTION_INFO_V1(flusso_test_statement);

/*
 * flusso_test_statement(name text, statement text) RETURNS text
 *
 * "build": the statement that builds the index's documents for a set of
 * root keys; "write": the one the worker runs while no seed runs, which
 * writes what that statement builds into the index's sinks.
 */
Datum
flusso_test_statement(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *statement = text_to_cstring(PG_GETARG_TEXT_PP(1));
	StoredIndex *index;
	DocumentQuery *query;

	flusso_require_admin();
	index = catalog_load_index(name);
	flusso_require_reader(index->owner, name);
	query = doc_build_query(index->schema);
	if (strcmp(statement, "build") == 0)
		PG_RETURN_TEXT_P(cstring_to_text(query->sql));
	if (strcmp(statement, "write") == 0)
		PG_RETURN_TEXT_P(cstring_to_text(sink_write_sql(sink_for_index(name, index->owner,
																		index->schema),
														SINK_CURRENT, query->sql,
														query->nparams + query->nkeys + 1)));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("statement \"%s\" is not recognized", statement),
			 errhint("The statements are build and write.")));
	PG_RETURN_NULL();			/* keep the compiler quiet */
}

#endif							/* FLUSSO_TEST_HOOKS */

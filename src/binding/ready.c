/*-------------------------------------------------------------------------
 *
 * ready.c
 *	  The worker builds an index only when flusso_check() would find no
 *	  error in it: every name and type the definition uses checks out, its
 *	  key names one row, and its owner exists and may read every column it
 *	  reads, and the WAL carries the changes of every table it reads (none
 *	  is unlogged).  Otherwise the index goes to phase error with the
 *	  first problem, as check words it, and the others go on.
 *
 * The walk runs as the index's owner under the pinned settings, as builds
 * do: trying a filter value runs its column type's input function, and a
 * domain's CHECK may call code the owner wrote.  flusso_preview asks the
 * same of a definition not created, for the role that calls it.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"

#include "binding/diagnostic.h"
#include "binding/logged.h"
#include "binding/privileges.h"
#include "binding/ready.h"
#include "binding/tables.h"
#include "document/session.h"

/* Raise the first error of sink, worded as flusso_check() words it. */
static void
raise_first_error(const DiagnosticSink *sink)
{
	ListCell   *lc;

	foreach(lc, sink->items)
	{
		Diagnostic *diag = lfirst(lc);

		if (diag->severity == SEVERITY_ERROR)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("%s%s%s", diag->path, diag->path[0] ? ": " : "", diag->message),
					 diag->hint ? errhint("%s", diag->hint) : 0));
	}
}

/* The catalog walk of check, as role under the conditions builds run under. */
static List *
walk_as(const IndexSchema *schema, Oid role, DiagnosticSink *sink)
{
	BuildSession session;
	List	   *tables;

	doc_session_begin(&session, role);
	tables = bind_index_tables(schema, sink);
	doc_session_end(&session);
	return tables;
}

/*
 * The tables (TableUse) the index reads; an error, worded as flusso_check()
 * words it, when the index cannot be built.
 */
List *
bind_index_ready(const StoredIndex *index)
{
	DiagnosticSink sink = {NIL, index->name};
	List	   *tables;
	char	   *problem = owner_problem(index->owner);
	ListCell   *lc;

	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("%s", problem),
				 errhint("Replace the index as another role with flusso_create_index(..., replace => true), or drop it.")));
	tables = walk_as(index->schema, index->owner, &sink);
	foreach(lc, tables)
		bind_logged(&sink, lfirst(lc));
	raise_first_error(&sink);
	bind_index_readable(tables, index->owner);
	return tables;
}

/*
 * The tables (TableUse) the index reads, walked as its owner, with what
 * the walk finds added to sink; NIL when the owner no longer exists.  For
 * the DDL hooks, which run in the session of whoever altered a table and
 * must not run a type's input function with that role's rights.
 */
List *
bind_index_reads(const StoredIndex *index, DiagnosticSink *sink)
{
	if (owner_problem(index->owner) != NULL)
		return NIL;
	return walk_as(index->schema, index->owner, sink);
}

/*
 * Before a definition that was not created is built as the role calling
 * (flusso_preview): an error when that role may not read a table or column
 * the definition reads, checked first, or when the definition does not
 * check out against the catalog.
 */
void
bind_definition_ready(const IndexSchema *schema, Oid role)
{
	DiagnosticSink sink = {NIL, NULL};
	List	   *tables = walk_as(schema, role, &sink);
	char	   *problem = privilege_problem(tables, role);

	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s", problem),
				 errhint("A preview reads the tables with the rights of the role that calls it.")));
	raise_first_error(&sink);
}

/*
 * Prepare, as the index's owner, exactly the statements the worker runs
 * for it: the one that builds and writes its documents (write_sql, which
 * takes the query's parameters and then the document ids) and every
 * resolution step.  An error when one does not prepare.
 */
void
bind_index_statements(const StoredIndex *index, const DocumentQuery *q,
					   const IndexResolver *resolver, const char *write_sql)
{
	Oid		   *types = doc_query_param_types(q, 1);
	Oid			text_array[1] = {TEXTARRAYOID};
	BuildSession session;
	ListCell   *lc;

	/* the document ids come last */
	types[q->nkeys + q->nparams] = TEXTARRAYOID;
	doc_session_begin(&session, index->owner);
	SPI_connect();
	if (SPI_prepare(write_sql, q->nparams + q->nkeys + 1, types) == NULL)
		elog(ERROR, "could not prepare the statement that builds the documents: %s",
			 SPI_result_code_string(SPI_result));
	foreach(lc, resolver->rules)
	{
		for (ResolveStep *step = ((ResolveRule *) lfirst(lc))->steps; step; step = step->next)
		{
			if (SPI_prepare(step->sql, 1, text_array) == NULL)
				elog(ERROR, "could not prepare a resolution step: %s",
					 SPI_result_code_string(SPI_result));
		}
	}
	SPI_finish();
	doc_session_end(&session);
}

/* Raise an error when owner may not read every column of tables it reads. */
void
bind_index_readable(List *tables, Oid owner)
{
	char	   *problem = privilege_problem(tables, owner);

	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("%s", problem),
				 errhint("Grant the privilege to the index's owner; the index is then seeded again.")));
}

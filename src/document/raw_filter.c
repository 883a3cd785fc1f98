/*-------------------------------------------------------------------------
 *
 * raw_filter.c
 *	  A raw filter ({raw: "sql"}) is spliced into the WHERE clause of the
 *	  build statement, so it must be exactly one SQL expression: text such
 *	  as "true) OR (true" would escape its parentheses and the key
 *	  restriction with them, and "1=1); DROP TABLE loans; --" would be a
 *	  second statement.
 *
 * The text is parsed as the only target of "SELECT <raw>": it must parse,
 * be one statement running to the end of the text, and that statement a
 * plain SELECT of one unnamed expression with nothing else (no FROM,
 * WHERE, ORDER BY, UNION, ...).  The build statement then wraps it in
 * parentheses with a line break before the closing one, so a trailing
 * "--" comment cannot swallow it.  Whether the expression is boolean and
 * names columns that exist is the prepared statement's business
 * (flusso_check() reports it).  flusso_create_index() refuses a filter
 * that fails here, and the build statement refuses it too, so a stored
 * definition from before this check is never run.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/parsenodes.h"
#include "parser/parser.h"

#include "util/attempt.h"
#include "document/raw_filter.h"

typedef struct RawParse
{
	const char *sql;
	List	   *statements;
} RawParse;

static void
parse(void *arg)
{
	RawParse   *p = arg;

	p->statements = raw_parser(p->sql, RAW_PARSE_DEFAULT);
}

/* NULL when raw is one SQL expression; otherwise what is wrong with it. */
char *
doc_raw_filter_problem(const char *raw)
{
	RawParse	p = {psprintf("SELECT %s\n", raw), NIL};
	ErrorData  *error;
	RawStmt    *statement;
	SelectStmt *select;
	ResTarget  *target;

	if (!attempt_error(parse, &p, &error))
		return psprintf("it does not parse: %s", error->message);
	if (list_length(p.statements) != 1)
		return pstrdup("it holds more than one statement");
	statement = linitial_node(RawStmt, p.statements);
	if (statement->stmt_len != 0)
		return pstrdup("it ends with a semicolon");
	select = (SelectStmt *) statement->stmt;
	if (!IsA(select, SelectStmt) || select->op != SETOP_NONE ||
		select->valuesLists != NIL || select->intoClause != NULL ||
		select->fromClause != NIL || select->whereClause != NULL ||
		select->groupClause != NIL || select->havingClause != NULL ||
		select->windowClause != NIL || select->distinctClause != NIL ||
		select->sortClause != NIL || select->limitCount != NULL ||
		select->limitOffset != NULL || select->lockingClause != NIL ||
		select->withClause != NULL)
		return pstrdup("it is more than an expression");
	if (list_length(select->targetList) != 1)
		return pstrdup("it is a list, not one expression");
	target = linitial_node(ResTarget, select->targetList);
	if (target->name != NULL)
		return pstrdup("it names its value (AS)");
	if (IsA(target->val, ColumnRef) &&
		IsA(llast(((ColumnRef *) target->val)->fields), A_Star))
		return pstrdup("it is a *, not an expression");
	return NULL;
}

/* Raise an error when raw is not one SQL expression; path says where. */
void
doc_check_raw_filter(const char *raw, const char *path)
{
	char	   *problem = doc_raw_filter_problem(raw);

	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid index definition: %s%sraw filter \"%s\" is not one SQL expression: %s",
						path ? path : "", path ? ": " : "", raw, problem),
				 errhint("A raw filter is a single boolean expression over the table's columns, such as \"stars >= 3 AND NOT hidden\".")));
}

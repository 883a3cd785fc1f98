/*-------------------------------------------------------------------------
 *
 * options.c
 *	  The options of flusso's output plugin, written by the worker and read
 *	  by the plugin, in one place:
 *
 *	  publication	the publication deciding which tables are emitted
 *	  columns		repeatable, "schema.table:col,col": the columns that
 *					table emits (identifiers, so neither '.' nor ':' nor
 *					',' can occur inside a name)
 *	  reads			repeatable, the same form: every column an index reads
 *					from that table, when all of them are known
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
#include "utils/varlena.h"

#include "cdc/options.h"

/* The spec of nspname.relname in specs, or NULL. */
ColumnSpec *
cdc_find_columns(List *specs, const char *nspname, const char *relname)
{
	ListCell   *lc;

	foreach(lc, specs)
	{
		ColumnSpec *spec = lfirst(lc);

		if (strcmp(spec->nspname, nspname) == 0 && strcmp(spec->relname, relname) == 0)
			return spec;
	}
	return NULL;
}

/* Have nspname.relname emit columns too, each column once. */
void
cdc_columns_add(List **specs, const char *nspname, const char *relname, List *columns)
{
	ColumnSpec *spec = cdc_find_columns(*specs, nspname, relname);
	ListCell   *lc;

	if (spec == NULL)
	{
		spec = palloc0(sizeof(ColumnSpec));
		spec->nspname = pstrdup(nspname);
		spec->relname = pstrdup(relname);
		*specs = lappend(*specs, spec);
	}
	foreach(lc, columns)
	{
		ListCell   *cc;

		foreach(cc, spec->columns)
		{
			if (strcmp(lfirst(cc), lfirst(lc)) == 0)
				break;
		}
		if (cc == NULL)
			spec->columns = lappend(spec->columns, pstrdup(lfirst(lc)));
	}
}

/* "schema.table:col,col" */
static char *
spec_text(const ColumnSpec *spec)
{
	StringInfoData buf;
	ListCell   *cc;

	initStringInfo(&buf);
	appendStringInfo(&buf, "%s.%s:", spec->nspname, spec->relname);
	foreach(cc, spec->columns)
		appendStringInfo(&buf, "%s%s", cc == list_head(spec->columns) ? "" : ",",
						 (char *) lfirst(cc));
	return buf.data;
}

/*
 * The options to decode with: the publication, a columns per spec, and a
 * reads per table whose every read column is known (reads).
 */
List *
cdc_plugin_options(const char *publication, List *specs, List *reads)
{
	List	   *options = list_make1(makeDefElem("publication",
												 (Node *) makeString(pstrdup(publication)), -1));
	ListCell   *lc;

	foreach(lc, specs)
		options = lappend(options, makeDefElem("columns",
											   (Node *) makeString(spec_text(lfirst(lc))), -1));
	/* a table said to read no column is not filtered: none is a mistake */
	foreach(lc, reads)
	{
		if (((ColumnSpec *) lfirst(lc))->columns != NIL)
			options = lappend(options, makeDefElem("reads",
												   (Node *) makeString(spec_text(lfirst(lc))), -1));
	}
	return options;
}

/* Forget the spec of nspname.relname, if specs has one. */
List *
cdc_columns_forget(List *specs, const char *nspname, const char *relname)
{
	ColumnSpec *spec = cdc_find_columns(specs, nspname, relname);

	return spec ? list_delete_ptr(specs, spec) : specs;
}

/* Read a columns (or reads) option; an error when it is malformed. */
ColumnSpec *
cdc_parse_columns(const char *option, const char *value)
{
	ColumnSpec *spec = palloc0(sizeof(ColumnSpec));
	char	   *copy = pstrdup(value);
	char	   *colon = strchr(copy, ':');
	char	   *dot = strchr(copy, '.');

	if (colon == NULL || dot == NULL || dot > colon)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for flusso option \"%s\": \"%s\"", option, value),
				 errhint("Write schema.table:column,column.")));
	*dot = '\0';
	*colon = '\0';
	spec->nspname = copy;
	spec->relname = dot + 1;
	if (!SplitIdentifierString(pstrdup(colon + 1), ',', &spec->columns) || spec->columns == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid column list in flusso option \"%s\": \"%s\"", option, value)));
	return spec;
}

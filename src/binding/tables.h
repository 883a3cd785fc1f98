/*-------------------------------------------------------------------------
 *
 * tables.h
 *	  The tables and columns an index reads, resolved against the system
 *	  catalogs as they are now.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_BINDING_TABLES_H
#define FLUSSO_BINDING_TABLES_H

#include "binding/diagnostic.h"
#include "schema/schema.h"

/*
 * A column a table's rows are found by: by every build, or (changed set)
 * when a change to another table is resolved to the documents it affects.
 */
typedef struct TableLookup
{
	char	   *column;
	char	   *changed;		/* NULL: builds; else the changed table */
} TableLookup;

/* A table an index reads, and what flusso needs from its change records. */
typedef struct TableUse
{
	Oid			relid;
	char	   *nspname;
	char	   *relname;
	char	   *display;		/* schema.table, for messages */
	char	   *path;			/* where the definition first names it */
	List	   *key_columns;	/* must be logged: they name the row's document */
	List	   *old_key_columns;	/* should be logged: they find the old parent */
	List	   *columns;		/* every column read */
	bool		columns_unknown;	/* and more: a raw filter's SQL reads */
	List	   *lookups;		/* TableLookup: columns its rows are found by */
} TableUse;

/* tables.c */
extern List *bind_index_tables(const IndexSchema *schema, DiagnosticSink *sink);
extern void table_use_add_names(List **list, List *more);

/* table_use.c */
extern TableUse *table_use_merge(List **tables, Oid relid, const char *path);
extern void table_use_add_lookup(TableUse *table, const char *column, const char *changed);

#endif							/* FLUSSO_BINDING_TABLES_H */

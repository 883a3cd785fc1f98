/*-------------------------------------------------------------------------
 *
 * build_internal.h
 *	  What the two halves of the build statement's generator share:
 *	  build.c (objects, values, filters, the root) and related.c (joins and
 *	  aggregates, read set-based).  Not for use outside src/document/.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_DOCUMENT_BUILD_INTERNAL_H
#define FLUSSO_DOCUMENT_BUILD_INTERNAL_H

#include "lib/stringinfo.h"
#include "nodes/pg_list.h"

#include "schema/schema.h"

typedef struct BuildContext
{
	int			first_param;	/* parameters before the constants: the key arrays */
	List	   *param_types;	/* Oid */
	List	   *param_values;	/* Datum */
	int			aliases;
	List	   *levels;			/* char *: the WITH items, in dependency order */
	List	   *join_levels;	/* JoinLevel *: items an aggregate may read */
} BuildContext;

/*
 * A table the statement reads, as the system catalogs hold it now, and what the
 * statement has made of it so far.
 */
typedef struct Table
{
	Oid			relid;
	char	   *qualified;		/* quoted schema.table */
	char	   *from;			/* what its rows are read from (doc_rows_of) */
	char	   *alias;
	int			number;			/* of the alias, t<number> */
	StringInfoData joins;		/* LEFT JOINs its joins and aggregates add */
	/*
	 * Where the levels under it take their keys from: "FROM ... [WHERE
	 * ...]" giving its rows at hand under the same alias; and, for the root
	 * with a single key, that key's column and the key array itself.
	 */
	char	   *rows;
	const char *key_column;
	char	   *key_array;
} Table;

/*
 * A to-many or has_one join's WITH item, which holds every related row of
 * its parent's rows at hand (related.c): an aggregate over the same rows
 * reads it instead of its table.
 */
typedef struct JoinLevel
{
	const Table *parent;
	const SchemaField *field;
	Table	   *related;		/* its alias reads the item */
	char	   *level;			/* the item, l<n> */
} JoinLevel;

extern char *doc_param(BuildContext *cx, Oid type, Datum value);
extern Table *doc_open_table(BuildContext *cx, const char *nspname, const char *relname);
extern Oid	doc_column_type(const Table *table, const char *column);
extern char *doc_column_ref(const Table *table, const char *column);
extern const char *doc_single_key(const ColumnList *key, const Table *table);
extern void doc_append_filters(BuildContext *cx, StringInfo where,
							   const SchemaFilterList *filters, const Table *table);
extern char *doc_finite_expr(const char *expr, Oid type);
extern char *doc_object_expr(BuildContext *cx, const SchemaFieldList *fields,
							 Table *table, const ColumnList *table_key);

/* related.c */
extern char *doc_join_expr(BuildContext *cx, const SchemaField *field, Table *parent,
						   const ColumnList *parent_key);
extern char *doc_aggregate_expr(BuildContext *cx, const SchemaField *field, Table *parent,
								const ColumnList *parent_key);

#endif							/* FLUSSO_DOCUMENT_BUILD_INTERNAL_H */

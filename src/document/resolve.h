/*-------------------------------------------------------------------------
 *
 * resolve.h
 *	  Which documents of an index a row change affects: rules compiled from
 *	  the schema, one per role a table plays in it, each turning the values
 *	  of a change into root keys.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_DOCUMENT_RESOLVE_H
#define FLUSSO_DOCUMENT_RESOLVE_H

#include "nodes/pg_list.h"
#include "schema/schema.h"

/* One step from the keys of a node's rows to the keys of its parent's. */
typedef struct ResolveStep
{
	char	   *sql;			/* $1 text[] of keys -> SELECT key::text */
	Oid			relid;			/* the table it reads ... */
	char	   *column;			/* ... by this column's values */
	struct ResolveStep *next;	/* NULL: the result is root keys */
} ResolveStep;

/*
 * A role of a table in an index: read `columns` from a change (old and new
 * rows), run `first` if set, then walk `up` to the root.
 */
typedef struct ResolveRule
{
	Oid			relid;
	char	   *nspname;
	char	   *relname;
	List	   *columns;		/* column names read from the change */
	ResolveStep *steps;			/* NULL: the values are root keys */
	bool		root;			/* the root table: a truncate deletes all */
} ResolveRule;

typedef struct IndexResolver
{
	List	   *rules;			/* ResolveRule */
	char	   *all_keys_sql;	/* every root key, for a truncate */
	int			nkeys;			/* root key columns */
} IndexResolver;

extern IndexResolver *doc_compile_resolver(const IndexSchema *schema);

#endif							/* FLUSSO_DOCUMENT_RESOLVE_H */

/*-------------------------------------------------------------------------
 *
 * lookups.h
 *	  Whether an index leads with each column an index's builds and
 *	  change resolution find rows by.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_CHECK_LOOKUPS_H
#define FLUSSO_CHECK_LOOKUPS_H

#include "binding/diagnostic.h"
#include "binding/tables.h"

/* A lookup no index serves, on a table or one of its partitions. */
typedef struct MissingIndex
{
	char	   *action;			/* "index public.reviews (book_id)" */
	char	   *sql;			/* CREATE INDEX CONCURRENTLY ..., no ';' */
	char	   *message;		/* what it costs, for flusso_check() */
} MissingIndex;

extern void lookups_add_resolved(List **tables, const IndexSchema *schema);
extern List *lookups_missing(const TableUse *table);
extern void check_lookups(DiagnosticSink *sink, const TableUse *table);

#endif							/* FLUSSO_CHECK_LOOKUPS_H */

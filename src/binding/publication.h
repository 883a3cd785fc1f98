/*-------------------------------------------------------------------------
 *
 * publication.h
 *	  What the flusso publication covers: its tables, their row filters and
 *	  column lists, and the actions it publishes.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_BINDING_PUBLICATION_H
#define FLUSSO_BINDING_PUBLICATION_H

#include "nodes/pg_list.h"

typedef struct PublishedTable
{
	Oid			relid;
	char	   *rowfilter;		/* NULL when every row is published */
	List	   *columns;		/* published column names */
} PublishedTable;

typedef struct PublicationState
{
	const char *name;
	bool		exists;
	Oid			oid;
	Oid			owner;
	bool		all_tables;
	bool		via_root;		/* publish_via_partition_root */
	char	   *missing_actions;	/* "update, delete", or NULL when all */
	List	   *tables;			/* PublishedTable */
} PublicationState;

/*
 * FROM items listing a publication's tables (pg_publication_tables t) with
 * each table's pg_class row (c), for WHERE t.pubname = ...
 */
#define PUBLICATION_TABLES_FROM \
	"pg_catalog.pg_publication_tables t " \
	"JOIN pg_catalog.pg_namespace n ON n.nspname OPERATOR(pg_catalog.=) t.schemaname " \
	"JOIN pg_catalog.pg_class c ON c.relnamespace OPERATOR(pg_catalog.=) n.oid AND c.relname OPERATOR(pg_catalog.=) t.tablename "

extern void publication_load(const char *name, PublicationState *state);
extern PublishedTable *publication_find(const PublicationState *state, Oid relid);
extern List *publication_unpublished_columns(const PublishedTable *published,
											 List *columns);
extern char *publication_table_sql(Oid relid, const char *qualified);

#endif							/* FLUSSO_BINDING_PUBLICATION_H */

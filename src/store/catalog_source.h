/*-------------------------------------------------------------------------
 *
 * catalog_source.h
 *	  flusso.source, the identity of the database flusso's state belongs
 *	  to, and of the ones it was copied from: every statement over it, as
 *	  a verb.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_CATALOG_SOURCE_H
#define FLUSSO_STORE_CATALOG_SOURCE_H

#include "nodes/pg_list.h"

/* A row of flusso.source. */
typedef struct SourceRow
{
	char	   *id;				/* uuid text */
	char	   *system_identifier;	/* unsigned, in decimal */
	Oid			database_oid;
	char	   *database_name;
	char	   *created_at;		/* timestamptz text */
	/* the database it was found to be a copy of, or all NULL */
	char	   *copied_system_identifier;
	char	   *copied_database_oid;
	char	   *copied_database_name;
	char	   *copied_detected_at;
} SourceRow;

extern bool catalog_source_in_catalog(void);
extern List *catalog_source_rows(void);
extern void catalog_source_lock(void);
extern void catalog_source_insert(const char *system_identifier, Oid database_oid,
								  const char *database_name);
extern void catalog_source_fold(const char *id, const char *copied_from);
extern void catalog_source_rename(const char *id, const char *database_name);

#endif							/* FLUSSO_STORE_CATALOG_SOURCE_H */

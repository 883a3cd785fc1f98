/*-------------------------------------------------------------------------
 *
 * lookup.h
 *	  Finding the tables and columns a definition names in the system catalogs, with
 *	  one wording for what is missing, and the rows generated SQL reads.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_DOCUMENT_LOOKUP_H
#define FLUSSO_DOCUMENT_LOOKUP_H

extern Oid	doc_find_table(const char *nspname, const char *relname, char **missing);
extern Oid	doc_table(const char *nspname, const char *relname);
extern char *doc_missing_column(Oid relid, const char *column);
extern AttrNumber doc_column(Oid relid, const char *column);
extern char *doc_rows_of(Oid relid, const char *qualified);

#endif							/* FLUSSO_DOCUMENT_LOOKUP_H */

/*-------------------------------------------------------------------------
 *
 * docid.h
 *	  Document ids: the root key's value, or for a composite key its values
 *	  joined with ':', each ':' and '\' inside a value escaped with '\'.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_DOCUMENT_DOCID_H
#define FLUSSO_DOCUMENT_DOCID_H

extern char *doc_id_sql(char *const *key_exprs, int nkeys);
extern char *doc_id_join(char *const *parts, int nkeys);
extern bool doc_id_split(const char *id, int nkeys, char **parts);

#endif							/* FLUSSO_DOCUMENT_DOCID_H */

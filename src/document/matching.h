/*-------------------------------------------------------------------------
 *
 * matching.h
 *	  The documents a partial re-snapshot rebuilds: of the root rows a
 *	  predicate selects, or of a list of ids (matching.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_DOCUMENT_MATCHING_H
#define FLUSSO_DOCUMENT_MATCHING_H

#include "document/build.h"

extern void doc_check_predicate(const DocumentQuery *q, Oid owner, const char *predicate,
								const char *name);
extern void doc_ids_matching(const DocumentQuery *q, Oid owner, const char *predicate,
							 void (*each) (const char *id, void *arg), void *arg);
extern void doc_check_ids(char **ids, int n, int nkeys, const char *name);

#endif							/* FLUSSO_DOCUMENT_MATCHING_H */

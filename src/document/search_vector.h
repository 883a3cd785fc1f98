/*-------------------------------------------------------------------------
 *
 * search_vector.h
 *	  The full-text vector of a document, and flusso_search().
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_DOCUMENT_SEARCH_VECTOR_H
#define FLUSSO_DOCUMENT_SEARCH_VECTOR_H

#include "schema/schema.h"

#define SEARCH_CONFIG "simple"

extern char *doc_search_expr(const IndexSchema *schema, const char *doc);

#endif							/* FLUSSO_DOCUMENT_SEARCH_VECTOR_H */

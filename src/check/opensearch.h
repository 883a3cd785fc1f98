/*-------------------------------------------------------------------------
 *
 * opensearch.h
 *	  flusso_check() for an index's OpenSearch sink.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_CHECK_OPENSEARCH_H
#define FLUSSO_CHECK_OPENSEARCH_H

#include "binding/diagnostic.h"
#include "store/catalog_index.h"

extern void check_opensearch(DiagnosticSink *dsink, const StoredIndex *index);

#endif							/* FLUSSO_CHECK_OPENSEARCH_H */

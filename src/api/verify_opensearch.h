/*-------------------------------------------------------------------------
 *
 * verify_opensearch.h
 *	  flusso_verify()'s OpenSearch part: the served generation against a
 *	  fresh build, repaired when asked (verify_opensearch.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_API_VERIFY_OPENSEARCH_H
#define FLUSSO_API_VERIFY_OPENSEARCH_H

#include "document/build.h"
#include "funcapi.h"
#include "store/catalog_index.h"

extern void verify_opensearch(ReturnSetInfo *rsinfo, const StoredIndex *index,
							  const DocumentQuery *q, bool repair);

#endif							/* FLUSSO_API_VERIFY_OPENSEARCH_H */

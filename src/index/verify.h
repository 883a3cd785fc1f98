/*-------------------------------------------------------------------------
 *
 * verify.h
 *	  flusso_verify(), sink by sink: what the table and the OpenSearch
 *	  parts share.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_INDEX_VERIFY_H
#define FLUSSO_INDEX_VERIFY_H

#include "document/build.h"
#include "document/session.h"
#include "funcapi.h"
#include "store/catalog_index.h"

extern void verify_build_all(const StoredIndex *index, const DocumentQuery *q, const char *sql,
							 BuildSession *session);
extern void verify_emit(ReturnSetInfo *rsinfo, const char *id, const char *problem,
						const char *sink);
extern void verify_opensearch(ReturnSetInfo *rsinfo, const StoredIndex *index,
							  const DocumentQuery *q, bool repair);

#endif							/* FLUSSO_INDEX_VERIFY_H */

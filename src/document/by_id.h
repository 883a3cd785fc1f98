/*-------------------------------------------------------------------------
 *
 * by_id.h
 *	  Building the documents of a list of document ids, as their index's
 *	  owner: for the shipper, which ships what the outbox names, and for
 *	  flusso_verify(), which compares what a remote sink holds; and the
 *	  document of one id, for flusso_build() and flusso_preview().
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_DOCUMENT_BY_ID_H
#define FLUSSO_DOCUMENT_BY_ID_H

#include "utils/jsonb.h"

#include "document/build.h"

extern char **doc_build_ids(const DocumentQuery *q, Oid owner, char **ids, int n);
extern Jsonb *doc_build_one(const DocumentQuery *q, Oid role, const char *id,
							const char *index_name);

#endif							/* FLUSSO_DOCUMENT_BY_ID_H */

/*-------------------------------------------------------------------------
 *
 * by_id.h
 *	  Building the documents of a list of document ids, as their index's
 *	  owner: for the shipper, which ships what the outbox names, and for
 *	  flusso_verify(), which compares what a remote sink holds.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_DOCUMENT_BY_ID_H
#define FLUSSO_DOCUMENT_BY_ID_H

#include "document/build.h"

extern char **doc_build_ids(const DocumentQuery *q, Oid owner, char **ids, int n);

#endif							/* FLUSSO_DOCUMENT_BY_ID_H */

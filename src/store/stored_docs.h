/*-------------------------------------------------------------------------
 *
 * stored_docs.h
 *	  Reading the documents the table sink stores (flusso_docs.<index>),
 *	  for the shipper, which ships them while OpenSearch mirrors it.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_STORED_DOCS_H
#define FLUSSO_STORE_STORED_DOCS_H

extern bool stored_docs_read(const char *index, char **ids, int n, char **docs);

#endif							/* FLUSSO_STORE_STORED_DOCS_H */

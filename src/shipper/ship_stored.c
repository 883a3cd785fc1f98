/*-------------------------------------------------------------------------
 *
 * ship_stored.c
 *	  The documents to ship as the table sink stores them, while OpenSearch
 *	  mirrors the table sink (sink/opensearch_sink.c): then a document is
 *	  built once, by the worker, and OpenSearch never holds what the table
 *	  sink did not.
 *
 * Whether OpenSearch mirrors it is read twice: before, so that an index
 * without the table sink, or being seeded, reads nothing it would not
 * use; and after the documents are read, in the same transaction, with
 * the documents table locked since the read (store/stored_docs.c): a
 * table emptied by flusso_set_sinks(), or replaced by a seed's end, before
 * the lock was taken is then seen to be so, and one emptied or replaced
 * after it waits for this transaction to end (while a transaction that
 * does so holds the table, the documents are built).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "document/session.h"
#include "store/catalog_opensearch_generation.h"
#include "store/stored_docs.h"
#include "shipper/shipper.h"

/*
 * The documents of ids[0..n-1] as the table sink holds them (NULL: it
 * holds none, a delete), in the caller's memory context; NULL when
 * OpenSearch does not mirror the table sink, and the caller builds them.
 */
char	  **
ship_stored_docs(const ShipIndex *x, char **ids, int n)
{
	char	  **docs;
	BuildSession session;
	bool		read;

	if (generation_mirroring_table(x->name) == 0)
		return NULL;
	docs = palloc0(sizeof(char *) * Max(n, 1));
	doc_session_begin(&session, x->owner);
	read = stored_docs_read(x->name, ids, n, docs);
	doc_session_end(&session);
	if (!read || generation_mirroring_table(x->name) == 0)
		return NULL;
	return docs;
}

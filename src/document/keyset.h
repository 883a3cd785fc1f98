/*-------------------------------------------------------------------------
 *
 * keyset.h
 *	  Reading an index's root keys in key order, as its owner: what a seed
 *	  walks the root table with, and the shipper a generation it seeds by
 *	  ranges.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_DOCUMENT_KEYSET_H
#define FLUSSO_DOCUMENT_KEYSET_H

#include "document/build.h"
#include "nodes/pg_list.h"

extern char *doc_keys_not_null_sql(const DocumentQuery *q);
extern char **doc_largest_key(const DocumentQuery *q, Oid owner);
extern int64 doc_estimated_rows(const DocumentQuery *q, Oid owner);
extern List *doc_read_keys(const DocumentQuery *q, Oid owner, char **after, char **upto,
						   int limit);
extern List *doc_read_keys_after(const DocumentQuery *q, Oid owner, char **after, int limit);
extern List *doc_keys_except(const DocumentQuery *q, Oid owner, List *keys, List *except);

#endif							/* FLUSSO_DOCUMENT_KEYSET_H */

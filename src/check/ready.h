/*-------------------------------------------------------------------------
 *
 * ready.h
 *	  What must hold before the worker builds an index.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_CHECK_READY_H
#define FLUSSO_CHECK_READY_H

#include "check/diagnostic.h"
#include "document/build.h"
#include "document/resolve.h"
#include "store/catalog_index.h"

extern List *check_index_ready(const StoredIndex *index);
extern List *check_index_reads(const StoredIndex *index, DiagnosticSink *sink);
extern void check_index_readable(List *tables, Oid owner);
extern void check_definition_ready(const IndexSchema *schema, Oid role);
extern void check_index_statements(const StoredIndex *index, const DocumentQuery *q,
								   const IndexResolver *resolver, const char *write_sql);

#endif							/* FLUSSO_CHECK_READY_H */

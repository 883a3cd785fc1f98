/*-------------------------------------------------------------------------
 *
 * ready.h
 *	  What must hold before the worker builds an index, or a preview or a
 *	  DDL hook reads what a definition reads.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_BINDING_READY_H
#define FLUSSO_BINDING_READY_H

#include "binding/diagnostic.h"
#include "document/build.h"
#include "document/resolve.h"
#include "store/catalog_index.h"

extern List *bind_index_ready(const StoredIndex *index);
extern List *bind_index_reads(const StoredIndex *index, DiagnosticSink *sink);
extern void bind_index_readable(List *tables, Oid owner);
extern void bind_definition_ready(const IndexSchema *schema, Oid role);
extern void bind_index_statements(const StoredIndex *index, const DocumentQuery *q,
								   const IndexResolver *resolver, const char *write_sql);

#endif							/* FLUSSO_BINDING_READY_H */

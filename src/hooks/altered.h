/*-------------------------------------------------------------------------
 *
 * altered.h
 *	  Indexes are compiled and seeded again after DDL that changes what
 *	  the rows of a table they read read as, or makes it unlogged, without
 *	  logging a row change.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_HOOKS_ALTERED_H
#define FLUSSO_HOOKS_ALTERED_H

#include "nodes/parsenodes.h"

#include "store/catalog_index.h"

extern List *altered_before_statement(Node *stmt);
extern void altered_note_statement(Node *stmt, List *retyped);
extern void altered_request_seeds_where(const char *kind,
										bool (*touches) (const StoredIndex *index, List *objects),
										List *objects);

#endif							/* FLUSSO_HOOKS_ALTERED_H */

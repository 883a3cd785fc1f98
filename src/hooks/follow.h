/*-------------------------------------------------------------------------
 *
 * follow.h
 *	  Index definitions follow what happens to their documents tables.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_HOOKS_FOLLOW_H
#define FLUSSO_HOOKS_FOLLOW_H

#include "nodes/pg_list.h"

extern void index_note_docs_table(bool dropped, Oid relid);

#endif							/* FLUSSO_HOOKS_FOLLOW_H */

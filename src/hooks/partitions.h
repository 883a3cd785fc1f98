/*-------------------------------------------------------------------------
 *
 * partitions.h
 *	  Indexes are seeded again when partitions of a table they read are
 *	  attached, detached or dropped.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_HOOKS_PARTITIONS_H
#define FLUSSO_HOOKS_PARTITIONS_H

#include "nodes/parsenodes.h"

extern void partitions_note_statement(AlterTableStmt *stmt);
extern void partitions_note_drop(Oid relid);

#endif							/* FLUSSO_HOOKS_PARTITIONS_H */

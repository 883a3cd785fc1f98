/*-------------------------------------------------------------------------
 *
 * pending.h
 *	  The documents an index owes: keys resolved and not built yet, kept
 *	  across transactions, each once.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_ENGINE_PENDING_H
#define FLUSSO_ENGINE_PENDING_H

typedef struct PendingKeys PendingKeys;

extern PendingKeys *pending_create(MemoryContext parent, Size memory_limit);
extern void pending_add(PendingKeys *pending, const char *id);
extern bool pending_is_empty(const PendingKeys *pending);
extern int64 pending_added(const PendingKeys *pending);
extern void pending_begin_read(PendingKeys *pending);
extern char *pending_next(PendingKeys *pending);
extern void pending_reset(PendingKeys *pending);

#endif							/* FLUSSO_ENGINE_PENDING_H */

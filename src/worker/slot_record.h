/*-------------------------------------------------------------------------
 *
 * slot_record.h
 *	  What a database remembers of its slot, to tell a lost slot from one
 *	  never made or dropped on purpose.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_WORKER_SLOT_RECORD_H
#define FLUSSO_WORKER_SLOT_RECORD_H

#include "ipc/shared.h"

extern bool slot_record_exists(void);
extern void slot_record_save(const char *slot_name);
extern void slot_record_forget(void);
extern void slot_record_lost(DatabaseEntry *entry, const char *slot_name);

#endif							/* FLUSSO_WORKER_SLOT_RECORD_H */

/*-------------------------------------------------------------------------
 *
 * xact.h
 *	  The one way flusso's background workers open and close a transaction;
 *	  the commit returns to the caller's memory context (see xact.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_UTIL_XACT_H
#define FLUSSO_UTIL_XACT_H

#include "access/xlogdefs.h"

extern bool xact_begin(bool lock_extension, const TransactionId *wait_for, int nwait);
extern void xact_commit(void);
extern void xact_commit_unflushed(void);
extern void xact_note_decoding(XLogRecPtr upto);

#endif							/* FLUSSO_UTIL_XACT_H */

/*-------------------------------------------------------------------------
 *
 * catalog_capture_log.h
 *	  flusso.capture_log, the diagnostic record of applied changes: every
 *	  statement over it, as a verb.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_CATALOG_CAPTURE_LOG_H
#define FLUSSO_STORE_CATALOG_CAPTURE_LOG_H

#include "access/xlogdefs.h"

extern void catalog_log_change(Oid relid, char op, Datum old_key, bool old_key_null,
							   Datum new_key, bool new_key_null,
							   TransactionId xid, XLogRecPtr commit_lsn);

#endif							/* FLUSSO_STORE_CATALOG_CAPTURE_LOG_H */

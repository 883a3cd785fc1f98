/*-------------------------------------------------------------------------
 *
 * catalog_signal.h
 *	  flusso.signal, the rows the stream reads as signals: their kinds, and
 *	  every statement over the table, as a verb.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_CATALOG_SIGNAL_H
#define FLUSSO_STORE_CATALOG_SIGNAL_H

#include "nodes/pg_list.h"

/* The kinds of signals: rows of flusso.signal ... */
#define SIGNAL_LOW "low"		/* a seed's chunk window opens */
#define SIGNAL_HIGH "high"		/* and closes */
#define SIGNAL_RESNAPSHOT "resnapshot"	/* flusso_resnapshot() */
#define SIGNAL_RETRY "retry"	/* flusso_retry_rejected() */
#define SIGNAL_PARTITIONS "partitions"	/* a partition attached, detached
										 * or dropped */
#define SIGNAL_ALTERED "altered"	/* DDL changed what rows read as, or
									 * made a table unlogged */
/* ... and what the stream says of a table an index reads */
#define SIGNAL_REWRITE "rewrite"	/* ALTER TABLE rewrote it */
#define SIGNAL_UNCOVERED "uncovered"	/* it changed, unpublished */

extern Datum catalog_insert_request(const char *kind, const char *name);
extern bool catalog_signal_kind_accepted(const char *kind);
extern void catalog_insert_requests(const char *kind, List *names);
extern char *catalog_insert_watermark(const char *kind, const char *name);
extern void catalog_forget_signal(const char *id);
extern void catalog_forget_stale_watermark(const char *id);
extern void catalog_forget_watermarks(const char *low, const char *high);
extern void catalog_forget_all_watermarks(void);
extern void catalog_forget_signals(const char *name);
extern void catalog_forget_answered_signals(const char *name);

#endif							/* FLUSSO_STORE_CATALOG_SIGNAL_H */

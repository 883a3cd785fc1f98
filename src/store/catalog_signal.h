/*-------------------------------------------------------------------------
 *
 * catalog_signal.h
 *	  flusso.signal, the rows the stream reads as signals: every statement
 *	  over the table, as a verb (their kinds are signal/signal.h's).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_CATALOG_SIGNAL_H
#define FLUSSO_STORE_CATALOG_SIGNAL_H

#include "nodes/pg_list.h"

extern Datum catalog_insert_request(const char *kind, const char *name,
									 const char *detail);
extern void catalog_insert_requests(const char *kind, List *names);
extern char *catalog_insert_watermark(const char *kind, const char *name);
extern void catalog_forget_signal(const char *id);
extern void catalog_forget_signal_of_kinds(const char *id, const char *const *kinds);
extern void catalog_forget_watermarks(const char *low, const char *high);
extern void catalog_forget_signals_of_kinds(const char *const *kinds);
extern void catalog_forget_signals(const char *name);
extern void catalog_forget_answered_signals(const char *name, const char *const *kinds);

#endif							/* FLUSSO_STORE_CATALOG_SIGNAL_H */

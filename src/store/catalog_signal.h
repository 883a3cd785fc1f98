/*-------------------------------------------------------------------------
 *
 * catalog_signal.h
 *	  flusso.signal, the rows the stream reads as signals: their kinds,
 *	  and every statement over the table, as a verb.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_CATALOG_SIGNAL_H
#define FLUSSO_STORE_CATALOG_SIGNAL_H

#include "access/xlogdefs.h"
#include "nodes/pg_list.h"

/* The kinds of signals: rows of flusso.signal ... */
#define SIGNAL_LOW "low"		/* a seed's chunk window opens */
#define SIGNAL_HIGH "high"		/* and closes */
#define SIGNAL_RESNAPSHOT "resnapshot"	/* flusso_resnapshot() */
#define SIGNAL_REBUILD "rebuild"	/* flusso_resnapshot(predicate =>) */
#define SIGNAL_REBUILD_IDS "rebuild_ids"	/* flusso_resnapshot(ids =>) */
#define SIGNAL_RETRY "retry"	/* flusso_retry_rejected() */
#define SIGNAL_PARTITIONS "partitions"	/* a partition attached, detached
										 * or dropped */
#define SIGNAL_ALTERED "altered"	/* DDL changed what rows read as, or
									 * made a table unlogged */
#define SIGNAL_REPLACED "replaced"	/* a table an index reads was replaced
									 * under its name */
/* ... and what the stream says of a table an index reads */
#define SIGNAL_REWRITE "rewrite"	/* ALTER TABLE rewrote it */
#define SIGNAL_UNCOVERED "uncovered"	/* it changed, unpublished */

/*
 * A row inserted into flusso.signal, as the stream delivered it, or a
 * table the stream says an index must be seeded again for (id NULL).
 */
typedef struct Signal
{
	char	   *id;
	char	   *kind;			/* SIGNAL_* */
	char	   *index_name;
	char	   *detail;			/* rebuild: the predicate; rebuild_ids: the
								 * ids, a text[] in text form; or NULL */
	char	   *table;			/* rewrite, uncovered: schema.table */
	XLogRecPtr	lsn;			/* the commit that inserted the row */
} Signal;

/* kinds a verb below is given, NULL-terminated */
extern const char *const *signal_watermark_kinds(void);
extern const char *const *signal_request_kinds(void);

extern char *catalog_insert_watermark(const char *kind, const char *name);
extern void catalog_forget_signal(const char *id);
extern void catalog_forget_signal_of_kinds(const char *id, const char *const *kinds);
extern void catalog_forget_watermarks(const char *low, const char *high);
extern void catalog_forget_signals_of_kinds(const char *const *kinds);
extern void catalog_forget_signals(const char *name);
extern void catalog_forget_answered_signals(const char *name, const char *const *kinds);

/* requests on flusso's own behalf: as the catalog's owner, seen at commit */
extern Datum catalog_request(const char *kind, const char *name, const char *detail);
extern void catalog_request_seeds(const char *kind, List *index_names);

#endif							/* FLUSSO_STORE_CATALOG_SIGNAL_H */

/*-------------------------------------------------------------------------
 *
 * signal.h
 *	  Signals: what reaches the worker in stream order rather than through
 *	  shared memory.  Their kinds, the signals a batch ended with, what the
 *	  worker does with them, and the requests that produce them.
 *
 * A signal is a row inserted into flusso.signal (a request, or a seed's
 * watermark), seen when the stream reaches its commit, or a table the
 * stream says an index reads was rewritten or changed unpublished.  The
 * module: kinds (here), reading a batch's signals (signal_read.c),
 * acting on them (signal_act.c), and the requests, from SQL functions,
 * DDL hooks and the shipper (signal_request.c).  signal_read.h and
 * signal_act.h are the worker's.  The rows themselves are
 * written and deleted by store/catalog_signal.c.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SIGNAL_SIGNAL_H
#define FLUSSO_SIGNAL_SIGNAL_H

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

/* the kinds a verb of store/catalog_signal.c is given (signal_act.c) */
extern const char *const *signal_watermark_kinds(void);
extern const char *const *signal_request_kinds(void);

/* requests (signal_request.c) */
extern void signal_request_reseed(const char *name);
extern void signal_request_rebuild_all(const char *name);
extern void signal_request_seeds(const char *kind, List *index_names);

#endif							/* FLUSSO_SIGNAL_SIGNAL_H */

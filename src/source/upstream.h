/*-------------------------------------------------------------------------
 *
 * upstream.h
 *	  The subscriptions that feed this database's tables from another
 *	  server (native logical replication), and how far each has applied
 *	  the publisher's changes: what flusso_wait() waits for when the
 *	  application commits on the publisher, and what flusso_status() and
 *	  flusso_upstream() report.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SOURCE_UPSTREAM_H
#define FLUSSO_SOURCE_UPSTREAM_H

#include "access/xlogdefs.h"
#include "datatype/timestamp.h"
#include "nodes/pg_list.h"

/* A subscription of this database, as it stands now. */
typedef struct Upstream
{
	Oid			subid;
	char	   *name;
	bool		enabled;
	int			pid;			/* its apply worker's; 0: none is running */
	XLogRecPtr	applied;		/* end of the last publisher commit it
								 * committed here (its origin's progress) */
	XLogRecPtr	confirmed;		/* the publisher's position its apply worker
								 * had applied all before, when it last
								 * heard (latest_end_lsn); 0 without one */
	TimestampTz heard_at;		/* when the publisher last sent it anything */
	int			tables;			/* the tables of flusso's publication it
								 * copies */
	int			copying;		/* of which not synchronized yet */
	int64		apply_errors;
} Upstream;

extern List *upstream_load(void);
extern Upstream *upstream_find(const char *name);
extern bool upstream_reached(const Upstream *upstream, XLogRecPtr lsn);
extern const char *upstream_state(const Upstream *upstream);
extern char *upstream_problem(const Upstream *upstream);

#endif							/* FLUSSO_SOURCE_UPSTREAM_H */

/*-------------------------------------------------------------------------
 *
 * catalog_outbox.h
 *	  flusso.outbox, the documents queued for OpenSearch: every statement
 *	  over it, as a verb.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_CATALOG_OUTBOX_H
#define FLUSSO_STORE_CATALOG_OUTBOX_H

#include "access/xlogdefs.h"
#include "datatype/timestamp.h"
#include "nodes/pg_list.h"

/* A queued row, as the shipper takes it. */
typedef struct OutboxRow
{
	char	   *id;
	int64		version;
	bool		seed_only;
	int64		seq;
} OutboxRow;

extern uint64 outbox_queue(const char *index, Datum ids, XLogRecPtr version, bool seed_only);
extern void outbox_requeue_rejected(const char *index, XLogRecPtr version);
extern void outbox_forget(const char *index);
extern void outbox_forget_every(void);
extern int	outbox_take(const char *index, int limit, const OutboxRow *after,
						MemoryContext context, OutboxRow **rows);
extern uint64 outbox_forget_shipped(const char *index, Datum ids, Datum seqs);
extern List *outbox_ids(const char *index);
extern bool outbox_holds_queued_by(const char *index, TimestampTz at);

#endif							/* FLUSSO_STORE_CATALOG_OUTBOX_H */

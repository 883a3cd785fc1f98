/*-------------------------------------------------------------------------
 *
 * batch.h
 *	  The changes decoded since the last acknowledgement: deduplicated,
 *	  with the transactions they came from, spilling to a temporary file
 *	  past a memory bound.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_CDC_BATCH_H
#define FLUSSO_CDC_BATCH_H

#include "cdc/thin_change.h"
#include "nodes/pg_list.h"
#include "storage/buffile.h"
#include "utils/hsearch.h"
#include "utils/resowner.h"

typedef struct ChangeBatch
{
	MemoryContext context;		/* records and the set; reset per batch */
	HTAB	   *records;		/* distinct records kept in memory */
	HTAB	   *xids;			/* committed transactions seen */
	Size		memory_used;
	Size		memory_limit;
	BufFile    *spill;			/* records past the memory limit */
	ResourceOwner owner;		/* owns spill: outlives decoding's transactions */
	int64		nspilled;
	int64		ndistinct;		/* in memory */
	int64		nreceived;		/* every record, duplicates included */
	TimestampTz oldest_commit;	/* 0 when empty */
	XLogRecPtr	last_commit_end;	/* the latest commit of a change in it */
	XLogRecPtr	read_from;		/* every commit in it was read past this */
	Oid			signal_relid;	/* flusso.signal: inserts there end a batch */
	int			nsignals;		/* rows inserted into it so far */
	List	   *notes;			/* BatchNote: flusso.signal rows, tables
								 * rewritten or not covered, in stream order */

	/* iteration; a change read lives until the next one is read */
	MemoryContext scan_context;
	HASH_SEQ_STATUS scan;
	bool		scanning_memory;
	int64		spill_read;
} ChangeBatch;

extern ChangeBatch *batch_create(MemoryContext parent, Size memory_limit);
extern void batch_add(ChangeBatch *batch, const char *data, int len);
extern bool batch_is_empty(const ChangeBatch *batch);
extern void batch_begin_scan(ChangeBatch *batch);
extern bool batch_next(ChangeBatch *batch, ThinChange *change);
extern int	batch_note_count(const ChangeBatch *batch);
extern void batch_read_note(const ChangeBatch *batch, int n, ThinChange *change);
extern TransactionId *batch_xids(ChangeBatch *batch, int *count);
extern void batch_reset(ChangeBatch *batch);

#endif							/* FLUSSO_CDC_BATCH_H */

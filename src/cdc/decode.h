/*-------------------------------------------------------------------------
 *
 * decode.h
 *	  In-process decoding of the WAL through flusso's slot: creating and
 *	  dropping the slot, reading batches of changes, confirming progress.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_CDC_DECODE_H
#define FLUSSO_CDC_DECODE_H

#include "cdc/batch.h"
#include "replication/logical.h"

typedef struct CaptureStream
{
	LogicalDecodingContext *ctx;
	ChangeBatch *batch;			/* where decoded records go */
	LogicalDecodeCommitCB plugin_commit;	/* the plugin's, which ours wraps */
	XLogRecPtr	confirmed;		/* last position confirmed */
	XLogRecPtr	waiting;		/* to confirm once waiting_commit is flushed */
	XLogRecPtr	waiting_commit; /* the last commit before waiting was due */
	bool		unsaved;		/* confirmed since the slot was last saved */
	TimestampTz saved_at;		/* last time the slot was saved to disk */
	XLogRecPtr	standby_end;	/* what synchronized_standby_slots confirmed */
	XLogRecPtr	standby_probe;	/* flushed at the last read, to confirm next */
} CaptureStream;

typedef enum SlotState
{
	SLOT_READY,					/* exists and can be read */
	SLOT_CREATED,				/* did not exist: created now */
	SLOT_RECREATED				/* was invalidated: dropped and created */
} SlotState;

extern SlotState cdc_prepare_slot(const char *slot_name, void (*waiting) (void));
extern CaptureStream *cdc_open(const char *slot_name, List *options, ChangeBatch *batch);
extern bool cdc_read(CaptureStream *stream, int max_changes, int timeout_ms);
extern XLogRecPtr cdc_position(CaptureStream *stream);
extern bool cdc_write_under_way(CaptureStream *stream, uint64 unread_bytes,
								uint64 queued_changes);
extern void cdc_confirm(CaptureStream *stream, XLogRecPtr lsn, int save_interval_ms);
extern void cdc_close(CaptureStream *stream, bool drop_slot);
extern void cdc_drop_slot(const char *slot_name);

#endif							/* FLUSSO_CDC_DECODE_H */

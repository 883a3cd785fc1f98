/*-------------------------------------------------------------------------
 *
 * batch.c
 *	  Collects the thin changes of a batch.  Records that name the same row
 *	  of the same relation with the same values are kept once: documents
 *	  are rebuilt from current rows, so repeating a change adds nothing.
 *	  Past memory_limit bytes, records go to a temporary file instead (not
 *	  deduplicated there), so a transaction of any size decodes in bounded
 *	  memory; readers get the in-memory records first, then the spilled
 *	  ones.  The few records that are not row changes to build from, rows
 *	  inserted into flusso.signal and tables the stream says were rewritten
 *	  or not covered (notes), are kept apart, in stream order, for the
 *	  engine to read (engine/signals.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "utils/memutils.h"

#include "cdc/batch.h"

/*
 * A record kept once: records that differ only in their transaction and
 * commit (ThinChangeHeader.identity_offset) name the same change.
 */
typedef struct RecordKey
{
	uint32		hash;
	int			len;
	int			identity_offset;
	char	   *data;
} RecordKey;

typedef struct RecordEntry
{
	RecordKey	key;			/* must be first */
} RecordEntry;

/* A record kept apart from the row changes: see batch_note_count(). */
typedef struct BatchNote
{
	int			len;
	char		data[FLEXIBLE_ARRAY_MEMBER];
} BatchNote;

/* Keep a note, in stream order; false when the record is a row change. */
static bool
keep_note(ChangeBatch *batch, const ThinChangeHeader *header, const char *data, int len)
{
	MemoryContext old;
	BatchNote  *note;

	if (header->op != THIN_REWRITE && header->op != THIN_UNCOVERED &&
		header->relid != batch->signal_relid)
		return false;
	/* a signal row updated or deleted (forgotten) says nothing */
	if (header->relid == batch->signal_relid && header->op != THIN_INSERT)
		return true;
	old = MemoryContextSwitchTo(batch->context);
	note = palloc(offsetof(BatchNote, data) + len);
	note->len = len;
	memcpy(note->data, data, len);
	batch->notes = lappend(batch->notes, note);
	MemoryContextSwitchTo(old);
	batch->memory_used += len;
	return true;
}

static uint32
record_hash(const void *key, Size keysize)
{
	return ((const RecordKey *) key)->hash;
}

static int
record_match(const void *a, const void *b, Size keysize)
{
	const RecordKey *ka = a;
	const RecordKey *kb = b;

	if (ka->hash != kb->hash || ka->len != kb->len || ka->identity_offset != kb->identity_offset)
		return 1;
	return memcmp(ka->data + ka->identity_offset, kb->data + kb->identity_offset,
				  ka->len - ka->identity_offset);
}

static void
create_sets(ChangeBatch *batch)
{
	HASHCTL		ctl;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(RecordKey);
	ctl.entrysize = sizeof(RecordEntry);
	ctl.hash = record_hash;
	ctl.match = record_match;
	ctl.hcxt = batch->context;
	batch->records = hash_create("flusso batch records", 1024, &ctl,
								 HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(TransactionId);
	ctl.entrysize = sizeof(TransactionId);
	ctl.hcxt = batch->context;
	batch->xids = hash_create("flusso batch xids", 64, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

ChangeBatch *
batch_create(MemoryContext parent, Size memory_limit)
{
	ChangeBatch *batch = MemoryContextAllocZero(parent, sizeof(ChangeBatch));

	batch->context = AllocSetContextCreate(parent, "flusso batch", ALLOCSET_DEFAULT_SIZES);
	batch->memory_limit = memory_limit;
	batch->owner = ResourceOwnerCreate(NULL, "flusso batch");
	batch->scan_context = AllocSetContextCreate(parent, "flusso batch scan",
												ALLOCSET_DEFAULT_SIZES);
	create_sets(batch);
	return batch;
}

/* Add one record as the output plugin wrote it. */
void
batch_add(ChangeBatch *batch, const char *data, int len)
{
	ThinChangeHeader header;
	RecordKey	key;
	bool		found;

	if (!thin_change_read_header(data, len, &header))
		elog(ERROR, "malformed flusso change record of %d bytes", len);
	batch->nreceived++;
	if (header.op == THIN_INSERT && header.relid == batch->signal_relid)
		batch->nsignals++;

	(void) hash_search(batch->xids, &header.xid, HASH_ENTER, NULL);
	if (batch->oldest_commit == 0 || header.commit_time < batch->oldest_commit)
		batch->oldest_commit = header.commit_time;
	batch->last_commit_end = Max(batch->last_commit_end, header.commit_end_lsn);

	if (keep_note(batch, &header, data, len))
		return;
	if (batch->memory_used >= batch->memory_limit)
	{
		/*
		 * Records arrive inside the reorder buffer's transaction; the file
		 * must not belong to it (owner, interXact), or it would be closed
		 * when the transaction ends.
		 */
		ResourceOwner saved = CurrentResourceOwner;

		CurrentResourceOwner = batch->owner;
		if (batch->spill == NULL)
		{
			MemoryContext old = MemoryContextSwitchTo(batch->context);

			batch->spill = BufFileCreateTemp(true);
			MemoryContextSwitchTo(old);
		}
		BufFileWrite(batch->spill, &len, sizeof(len));
		BufFileWrite(batch->spill, (void *) data, len);
		CurrentResourceOwner = saved;
		batch->nspilled++;
		return;
	}

	key.len = len;
	key.identity_offset = header.identity_offset;
	key.data = (char *) data;
	key.hash = hash_bytes((const unsigned char *) data + header.identity_offset,
						  len - header.identity_offset);
	(void) hash_search(batch->records, &key, HASH_FIND, &found);
	if (found)
		return;
	key.data = MemoryContextAlloc(batch->context, len);
	memcpy(key.data, data, len);
	(void) hash_search(batch->records, &key, HASH_ENTER, NULL);
	batch->ndistinct++;
	batch->memory_used += len + sizeof(RecordEntry) + 16;
}

bool
batch_is_empty(const ChangeBatch *batch)
{
	return batch->nreceived == 0;
}

/*
 * Start reading the batch from its first change.  No change is added once
 * it is read: the set is frozen, so that a scan may span the transactions
 * a batch is applied in.
 */
void
batch_begin_scan(ChangeBatch *batch)
{
	hash_freeze(batch->records);
	hash_seq_init(&batch->scan, batch->records);
	batch->scanning_memory = true;
	batch->spill_read = 0;
	if (batch->spill)
	{
		ResourceOwner saved = CurrentResourceOwner;

		CurrentResourceOwner = batch->owner;
		if (BufFileSeek(batch->spill, 0, 0, SEEK_SET) != 0)
			elog(ERROR, "could not rewind flusso batch spill file");
		CurrentResourceOwner = saved;
	}
}

/*
 * The next change of the batch.  It is valid until the next call: each
 * call frees what the previous one read, so a scan of any length runs in
 * constant memory.
 */
bool
batch_next(ChangeBatch *batch, ThinChange *change)
{
	MemoryContext old;
	bool		ok = false;

	MemoryContextReset(batch->scan_context);
	old = MemoryContextSwitchTo(batch->scan_context);

	if (batch->scanning_memory)
	{
		RecordEntry *entry = hash_seq_search(&batch->scan);

		if (entry)
			ok = thin_change_read(entry->key.data, entry->key.len, change);
		else
			batch->scanning_memory = false;
		if (entry && !ok)
			elog(ERROR, "malformed flusso change record in batch");
	}
	if (!ok && !batch->scanning_memory && batch->spill_read < batch->nspilled)
	{
		ResourceOwner saved = CurrentResourceOwner;
		int			len;
		char	   *data;

		CurrentResourceOwner = batch->owner;
		if (BufFileRead(batch->spill, &len, sizeof(len)) != sizeof(len))
			elog(ERROR, "could not read flusso batch spill file");
		data = palloc(len);
		if (BufFileRead(batch->spill, data, len) != (size_t) len)
			elog(ERROR, "could not read flusso batch spill file");
		CurrentResourceOwner = saved;
		if (!thin_change_read(data, len, change))
			elog(ERROR, "malformed flusso change record in spill file");
		batch->spill_read++;
		ok = true;
	}
	MemoryContextSwitchTo(old);
	return ok;
}

/*
 * The notes of the batch: rows inserted into flusso.signal, and tables the
 * stream says were rewritten or changed while the publication did not
 * cover them.  They are not row changes, so batch_next() does not return
 * them; they are few, kept in memory in stream order, and read by index.
 */
int
batch_note_count(const ChangeBatch *batch)
{
	return list_length(batch->notes);
}

/* Note n of the batch, read into change in the caller's memory context. */
void
batch_read_note(const ChangeBatch *batch, int n, ThinChange *change)
{
	BatchNote  *note = list_nth(batch->notes, n);

	if (!thin_change_read(note->data, note->len, change))
		elog(ERROR, "malformed flusso change record in batch");
}

/*
 * The committed top-level transactions the batch's changes came from, as
 * an array of *count, in the batch's memory context.
 */
TransactionId *
batch_xids(ChangeBatch *batch, int *count)
{
	HASH_SEQ_STATUS status;
	TransactionId *xid;
	TransactionId *xids;

	*count = 0;
	xids = MemoryContextAlloc(batch->context,
							  sizeof(TransactionId) * Max(hash_get_num_entries(batch->xids), 1));
	hash_seq_init(&status, batch->xids);
	while ((xid = hash_seq_search(&status)) != NULL)
		xids[(*count)++] = *xid;
	return xids;
}

void
batch_reset(ChangeBatch *batch)
{
	if (batch->spill)
	{
		ResourceOwner saved = CurrentResourceOwner;

		CurrentResourceOwner = batch->owner;
		BufFileClose(batch->spill);
		CurrentResourceOwner = saved;
	}
	batch->spill = NULL;
	MemoryContextReset(batch->context);
	batch->memory_used = 0;
	batch->nspilled = 0;
	batch->ndistinct = 0;
	batch->nreceived = 0;
	batch->oldest_commit = 0;
	batch->last_commit_end = InvalidXLogRecPtr;
	batch->read_from = InvalidXLogRecPtr;
	batch->nsignals = 0;
	batch->notes = NIL;
	create_sets(batch);
}

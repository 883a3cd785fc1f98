/*-------------------------------------------------------------------------
 *
 * ship_record.c
 *	  What became of a bulk's rows, recorded in a transaction of its own:
 *	  the rows done leave the outbox, the rows refused for good go to
 *	  flusso.rejected (and with on_error 'stop' the index stops shipping),
 *	  and the rows to try again stay.  A seed range's bulk moves its
 *	  generation's cursor instead (ship_range.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "shipper/ship_digest.h"
#include "shipper/ship_range.h"
#include "shipper/ship_record.h"
#include "store/catalog_outbox.h"
#include "store/catalog_rejected.h"
#include "store/catalog_sink.h"
#include "util/xact.h"

static Datum
text_array(List *rows, bool ids)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(list_length(rows), 1));
	int			n = 0;
	ListCell   *lc;

	foreach(lc, rows)
	{
		QueuedRow  *r = lfirst(lc);

		elems[n++] = ids ? CStringGetTextDatum(r->id) : Int64GetDatum(r->seq);
	}
	return ids ? PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT))
		: PointerGetDatum(construct_array(elems, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * Forget the rows not queued again since they were read; returns how many
 * were forgotten.
 *
 * The worker queues documents again in transactions of its own that lock
 * outbox rows in an order of its own (a slice's ids in no particular
 * order, several slices a transaction), so the shipper must not wait for
 * a row the worker holds while it holds rows the worker may want next:
 * that is how the two deadlocked.  It locks the rows it deletes with SKIP
 * LOCKED, never waiting.  A row it skips is being queued again (its seq
 * changes, and it was not to be deleted) or dropped; if the worker's
 * transaction aborts instead, the row stays and is shipped again, which is
 * harmless.  The worker may wait for the shipper, which waits for nobody
 * while it holds outbox rows: no cycle.
 */
static uint64
forget_rows(const char *index, List *rows)
{
	uint64		forgotten;

	if (rows == NIL)
		return 0;
	forgotten = outbox_forget_shipped(index, text_array(rows, true), text_array(rows, false));
	return forgotten;
}

/*
 * Stop the shipping of an index, as on_error 'stop' asks, for n rejected
 * documents of error type error_type.
 */
static void
stop_index(BulkBatch *b, int n, const char *error_type)
{
	const char *index = b->x->name;

	b->status->reread = true;
	catalog_stop_shipping(index,
						  psprintf("OpenSearch rejected %d documents (%s); shipping stopped, as on_error 'stop' asks: see flusso_rejected('%s'), then call flusso_retry_rejected('%s')",
								   n, error_type, index, index));
}

/*
 * Record how the rows fared, in a transaction of its own.  The index is
 * stopped first: that row may be locked by the worker (a retry of the
 * rejected documents), and the shipper waits for it holding no outbox
 * row.  A rejected row is recorded only if it is forgotten: one queued
 * again meanwhile is shipped again, built from the newer rows.
 */
void
ship_record_batch(BulkBatch *b, Outcome *out)
{
	const char *index = b->x->name;
	ListCell   *lc,
			   *rc;

	if (!xact_begin(true, NULL, 0))
		return;
	SPI_connect();
	if (out->rejected != NIL && strcmp(b->x->on_error, "stop") == 0)
	{
		BulkItemResult *first = linitial(out->rejections);

		stop_index(b, list_length(out->rejected),
				   first->error_type ? first->error_type : "unknown");
	}
	/* what OpenSearch stored, before the rows leave the outbox */
	ship_digest_record(b);
	if (b->range != NULL)
		range_record(b, out);
	else
	{
		forget_rows(index, out->done);
		forboth(lc, out->rejected, rc, out->rejections)
		{
			if (forget_rows(index, list_make1(lfirst(lc))) > 0)
				ship_record_rejected(index, lfirst(lc), lfirst(rc));
		}
	}
	SPI_finish();
	/* lost in a crash, the rows are shipped again: no need to wait for the flush */
	xact_commit_unflushed();
}

/*-------------------------------------------------------------------------
 *
 * signal_read.c
 *	  Reads the signals a batch of the stream carries: the rows inserted
 *	  into flusso.signal, and one signal per index that reads a table the
 *	  stream says was rewritten or changed while the publication did not
 *	  cover it.  The batch keeps these records apart from the row changes
 *	  (cdc/batch.c, its notes), in stream order.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "signal/signal_read.h"

/*
 * The signal a row of flusso.signal makes, or NULL when it is not one: its
 * id, kind and index name, and its detail (THIN_MISSING before 0.11.0,
 * whose table lacks the column).
 */
static Signal *
row_signal(const ThinChange *change)
{
	Signal	   *signal;

	if (change->op != THIN_INSERT || change->ncolumns != 4 || change->new_values == NULL)
		return NULL;
	for (int c = 0; c < 3; c++)
	{
		if (change->new_values[c].kind != THIN_TEXT)
			return NULL;
	}
	signal = palloc0(sizeof(Signal));
	signal->id = pstrdup(change->new_values[0].text);
	signal->kind = pstrdup(change->new_values[1].text);
	signal->index_name = pstrdup(change->new_values[2].text);
	if (change->new_values[3].kind == THIN_TEXT)
		signal->detail = pstrdup(change->new_values[3].text);
	signal->lsn = change->commit_end_lsn;
	return signal;
}

/* Is there a signal of kind for index name in signals already? */
static bool
signalled(List *signals, const char *kind, const char *name)
{
	ListCell   *lc;

	foreach(lc, signals)
	{
		Signal	   *signal = lfirst(lc);

		if (strcmp(signal->kind, kind) == 0 && strcmp(signal->index_name, name) == 0)
			return true;
	}
	return false;
}

/*
 * A table was rewritten, or changed while the publication did not cover
 * it: every index that reads it must be seeded again.  One signal per
 * index and kind is added to signals.
 */
static List *
coverage_signals(Engine *engine, const ThinChange *change, List *signals)
{
	const char *kind = change->op == THIN_REWRITE ? SIGNAL_REWRITE : SIGNAL_UNCOVERED;
	ListCell   *lc;

	foreach(lc, engine_readers(engine, change->relid))
	{
		const char *name = engine_index_name(lfirst(lc));
		Signal	   *signal;

		if (signalled(signals, kind, name))
			continue;
		signal = palloc0(sizeof(Signal));
		signal->kind = pstrdup(kind);
		signal->index_name = pstrdup(name);
		signal->table = psprintf("%s.%s", change->nspname, change->relname);
		signals = lappend(signals, signal);
	}
	return signals;
}

/*
 * The signals of a batch, in stream order, allocated in the caller's
 * memory context, which must outlive the transactions the batch is
 * resolved in (the worker's turn).
 */
List *
signal_read(Engine *engine, const ChangeBatch *batch)
{
	List	   *signals = NIL;

	for (int n = 0; n < batch_note_count(batch); n++)
	{
		ThinChange	change;

		batch_read_note(batch, n, &change);
		if (change.op == THIN_REWRITE || change.op == THIN_UNCOVERED)
			signals = coverage_signals(engine, &change, signals);
		else
		{
			Signal	   *signal = row_signal(&change);

			if (signal)
				signals = lappend(signals, signal);
		}
	}
	return signals;
}

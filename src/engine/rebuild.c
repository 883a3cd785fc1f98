/*-------------------------------------------------------------------------
 *
 * rebuild.c
 *	  A partial re-snapshot: the documents of the root rows a predicate
 *	  selects, or of a list of ids, added to those the index owes, so that
 *	  the worker builds them in place (in the generations the index writes
 *	  now) beside its live changes, a slice at a time (owed.c).
 *
 * The request arrives in stream order (engine/signals.c), and its ids
 * join the set a batch fills: the slot is confirmed past the request only
 * once they are built, so a crash in between reads it again from the
 * stream and rebuilds them then.  Reading the ids lasts no longer than
 * flusso.build_timeout allows, whatever the predicate does with the
 * cancel; a predicate that fails or outlasts it rebuilds nothing it had
 * not already added, and the index goes on.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"

#include "document/docid.h"
#include "document/matching.h"
#include "engine/engine_index.h"
#include "engine/pending.h"
#include "settings.h"
#include "util/attempt.h"
#include "util/text_array.h"

typedef struct Rebuild
{
	EngineIndex *ei;
	const char *predicate;		/* or NULL */
	const char *ids;			/* a text[] in text form, or NULL */
	int64		added;
} Rebuild;

static void
add_id(const char *id, void *arg)
{
	Rebuild    *r = arg;

	pending_add(r->ei->owed.filling, id);
	r->added++;
}

static void
add_ids(void *arg)
{
	Rebuild    *r = arg;
	EngineIndex *ei = r->ei;

	if (r->predicate)
		doc_ids_matching(ei->query, ei->index->owner, r->predicate, add_id, r);
	else
	{
		Datum		array = OidInputFunctionCall(F_ARRAY_IN, (char *) r->ids, TEXTOID, -1);
		int			n;
		char	  **ids = text_array_all_strings(array, &n);
		char	  **parts = palloc(sizeof(char *) * ei->resolver->nkeys);

		for (int i = 0; i < n; i++)
		{
			/* checked when asked for: this only guards the stream */
			if (ids[i] && doc_id_split(ids[i], ei->resolver->nkeys, parts))
				add_id(ids[i], r);
		}
	}
}

/*
 * Add the documents of the root rows predicate selects, or of the ids (a
 * text[] in text form), to those ei owes, in the caller's transaction.
 * Returns how many were added, or -1 with *failure saying why none more
 * could be (an error that may quote a row value said by its SQLSTATE, as
 * util/attempt.c words it for flusso_status()).
 */
int64
engine_rebuild(EngineIndex *ei, const char *predicate, const char *ids, char **failure)
{
	Rebuild		r = {ei, predicate, ids, 0};
	ErrorData  *error;
	bool		timed_out;

	*failure = NULL;
	if (ei->broken || ei->owed.filling == NULL)
		return 0;
	if (attempt_error_within(add_ids, &r, flusso_build_timeout, &error, &timed_out))
		return r.added;
	*failure = timed_out
		? psprintf("reading the ids took longer than flusso.build_timeout (%d ms)", flusso_build_timeout)
		: attempt_message_for_status(error);
	if (!timed_out && strcmp(*failure, error->message) != 0)
		ereport(LOG,
				(errmsg("flusso index \"%s\": a partial re-snapshot failed: %s",
						ei->index->name, error->message)));
	return -1;
}

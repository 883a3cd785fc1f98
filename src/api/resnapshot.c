/*-------------------------------------------------------------------------
 *
 * resnapshot.c
 *	  flusso_resnapshot(name), seed an index again or rebuild some of its
 *	  documents (a predicate, a list of ids), and flusso_retry_rejected
 *	  (name), ship its rejected documents again: requests that travel in
 *	  stream order, as rows of flusso.signal.
 *
 * The worker sees a request after every change committed before it.  It
 * marks the index for seeding in the transaction that reads a
 * re-snapshot request, and deletes the row once that seed is complete: a
 * crash in between seeds again rather than not at all.  A retry queues
 * the rejected documents again with the version of the request's commit,
 * in the transaction that reads it.  The caller's rights are checked
 * here; the row is inserted as the catalog's owner (store/catalog_signal.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"

#include "document/build.h"
#include "document/matching.h"
#include "store/catalog_index.h"
#include "store/catalog_rejected.h"
#include "store/catalog_signal.h"
#include "util/access.h"
#include "util/pinned.h"
#include "util/text_array.h"

PG_FUNCTION_INFO_V1(flusso_resnapshot);
PG_FUNCTION_INFO_V1(flusso_retry_rejected);

/* Insert a request of kind for index name, as its owner may. */
static Datum
insert_request(const char *kind, const char *name)
{
	StoredIndex *index;

	flusso_require_admin();
	index = catalog_load_index(name);
	flusso_require_owner(index->owner, name);
	return catalog_request(kind, name, NULL);
}

/*
 * flusso_resnapshot(name text, predicate text DEFAULT NULL, ids text[]
 * DEFAULT NULL) RETURNS uuid: the request's id.  With neither, the index
 * is seeded again; with a predicate over its root table, or a list of
 * document ids, those documents alone are rebuilt, in place.  Either is
 * checked here, as the index's owner, so that nothing is recorded for one
 * that cannot apply.  Before ALTER EXTENSION flusso UPDATE to 0.11.0 the
 * function takes the name alone.
 */
Datum
flusso_resnapshot(PG_FUNCTION_ARGS)
{
	char	   *name;
	StoredIndex *index;
	DocumentQuery *query;
	const char *kind;
	char	   *detail;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (PG_NARGS() < 3 || (PG_ARGISNULL(1) && PG_ARGISNULL(2)))
		PG_RETURN_DATUM(insert_request(SIGNAL_RESNAPSHOT, name));
	if (!PG_ARGISNULL(1) && !PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a re-snapshot of index \"%s\" takes a predicate or ids, not both", name)));

	flusso_require_admin();
	index = catalog_load_index(name);
	flusso_require_owner(index->owner, name);
	query = doc_build_query(index->schema);
	if (!PG_ARGISNULL(1))
	{
		kind = SIGNAL_REBUILD;
		detail = text_to_cstring(PG_GETARG_TEXT_PP(1));
		doc_check_predicate(query, index->owner, detail, name);
	}
	else
	{
		Datum		ids = PG_GETARG_DATUM(2);
		int			n;
		char	  **strings = text_array_all_strings(ids, &n);

		kind = SIGNAL_REBUILD_IDS;
		doc_check_ids(strings, n, query->nkeys, name);
		if (n == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a re-snapshot of index \"%s\" by ids names no id", name)));
		detail = OidOutputFunctionCall(F_ARRAY_OUT, ids);
	}
	PG_RETURN_DATUM(catalog_request(kind, name, detail));
}

/*
 * flusso_retry_rejected(name text) RETURNS bigint: how many rejected
 * documents the request will queue again (it also lets an index that
 * on_error 'stop' stopped ship again).
 */
Datum
flusso_retry_rejected(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	CatalogUser saved;
	int64		count;

	(void) insert_request(SIGNAL_RETRY, name);
	catalog_become_owner(&saved);
	count = catalog_count_rejected(name);
	catalog_restore_user(&saved);
	PG_RETURN_INT64(count);
}

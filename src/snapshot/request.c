/*-------------------------------------------------------------------------
 *
 * request.c
 *	  The requests that travel in stream order: flusso_resnapshot(name),
 *	  seed an index again, and flusso_retry_rejected(name), ship its
 *	  rejected documents again.
 *
 * A request is a row in flusso.signal, so the worker sees it in stream
 * order, after every change committed before it.  The worker marks the
 * index for seeding in the transaction that reads a re-snapshot request,
 * and deletes the row once that seed is complete: a crash in between
 * seeds again rather than not at all.  A retry queues the rejected
 * documents again with the version of the request's commit, in the
 * transaction that reads it.  The shipper asks for a seed too, when the
 * OpenSearch index an index served is gone (snap_request_reseed).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/uuid.h"

#include "index/access.h"
#include "engine/engine.h"
#include "store/catalog_index.h"
#include "store/catalog_rejected.h"
#include "store/catalog_signal.h"
#include "ipc/requests.h"
#include "snapshot/request.h"

PG_FUNCTION_INFO_V1(flusso_resnapshot);
PG_FUNCTION_INFO_V1(flusso_retry_rejected);

/* Insert a request of kind for index name; its id. */
static Datum
insert_signal(const char *kind, const char *name)
{
	CatalogUser saved;
	Datum		id;

	catalog_become_owner(&saved);
	id = catalog_insert_request(kind, name);
	catalog_restore_user(&saved);
	request_worker_at_commit(true);
	return id;
}

/* Insert a request of kind for index name, as its owner may. */
static Datum
insert_request(const char *kind, const char *name)
{
	StoredIndex *index;

	flusso_require_admin();
	index = catalog_load_index(name);
	flusso_require_owner(index->owner, name);
	return insert_signal(kind, name);
}

/*
 * Ask for index name to be seeded again, in the caller's transaction, on
 * flusso's own behalf (the shipper's, whose served OpenSearch index is
 * gone).
 */
void
snap_request_reseed(const char *name)
{
	(void) insert_signal(SIGNAL_RESNAPSHOT, name);
}

/* flusso_resnapshot(name text) RETURNS uuid: the request's id */
Datum
flusso_resnapshot(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(insert_request(SIGNAL_RESNAPSHOT, text_to_cstring(PG_GETARG_TEXT_PP(0))));
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

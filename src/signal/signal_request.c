/*-------------------------------------------------------------------------
 *
 * signal_request.c
 *	  The requests that travel in stream order, as rows of flusso.signal:
 *	  flusso_resnapshot(name), seed an index again, or rebuild some of its
 *	  documents (a predicate, a list of ids); flusso_retry_rejected
 *	  (name), ship its rejected documents again; a seed the DDL hooks ask
 *	  for (a partition attached or detached, a table altered outside the
 *	  WAL); and a seed the shipper asks for, when the OpenSearch index an
 *	  index served is gone.
 *
 * A request is a row in flusso.signal, so the worker sees it in stream
 * order, after every change committed before it.  The worker marks the
 * index for seeding in the transaction that reads a re-snapshot request,
 * and deletes the row once that seed is complete: a crash in between
 * seeds again rather than not at all.  A retry queues the rejected
 * documents again with the version of the request's commit, in the
 * transaction that reads it.  Each request is inserted as the catalog's
 * owner, once the caller's rights were checked, and sets the worker's
 * latch at commit.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/uuid.h"

#include "document/build.h"
#include "document/matching.h"
#include "ipc/requests.h"
#include "signal/signal.h"
#include "store/catalog_index.h"
#include "store/catalog_rejected.h"
#include "store/catalog_signal.h"
#include "util/access.h"
#include "util/text_array.h"

PG_FUNCTION_INFO_V1(flusso_resnapshot);
PG_FUNCTION_INFO_V1(flusso_retry_rejected);

/* Insert a request of kind for index name, about detail (or NULL); its id. */
static Datum
insert_signal(const char *kind, const char *name, const char *detail)
{
	CatalogUser saved;
	Datum		id;

	catalog_become_owner(&saved);
	id = catalog_insert_request(kind, name, detail);
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
	return insert_signal(kind, name, NULL);
}

/*
 * Ask for index name to be seeded again, in the caller's transaction, on
 * flusso's own behalf (the shipper's, whose served OpenSearch index is
 * gone).
 */
void
signal_request_reseed(const char *name)
{
	(void) insert_signal(SIGNAL_RESNAPSHOT, name, NULL);
}

/*
 * Ask for every document of index name to be rebuilt in place, in the
 * caller's transaction, on flusso's own behalf: its definition gained
 * fields (index/index.c checked that flusso.signal can hold the request).
 */
void
signal_request_rebuild_all(const char *name)
{
	(void) insert_signal(SIGNAL_REBUILD, name, "true");
}

/*
 * Can the database's flusso.signal hold a request of kind?  Its objects
 * may be older than the library (ALTER EXTENSION flusso UPDATE not run
 * yet), and a row its CHECK rejects would fail the user's commit.
 */
static bool
kind_accepted(const char *kind)
{
	int			major = 0;
	int			minor = 0;
	char	   *version;
	bool		accepted = true;

	SPI_connect();
	if (SPI_execute("SELECT extversion FROM pg_catalog.pg_extension "
					"WHERE extname OPERATOR(pg_catalog.=) 'flusso'", true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the version of extension \"flusso\"");
	version = SPI_processed == 1
		? SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1) : NULL;
	if (version == NULL || sscanf(version, "%d.%d", &major, &minor) != 2)
		accepted = false;
	else if (strcmp(kind, SIGNAL_ALTERED) == 0)
		accepted = major > 0 || minor >= 5;
	else if (strcmp(kind, SIGNAL_REPLACED) == 0)
		accepted = major > 0 || minor >= 7;
	else if (strcmp(kind, SIGNAL_PARTITIONS) == 0)
		accepted = major > 0 || minor >= 4;
	SPI_finish();
	return accepted;
}

/*
 * Insert a request of kind for each index named, as the catalog's owner,
 * and have the worker look at commit: called as a transaction commits, by
 * the DDL hooks.  When the database's flusso objects cannot hold it, warn
 * instead.
 */
void
signal_request_seeds(const char *kind, List *index_names)
{
	CatalogUser saved;
	ListCell   *lc;

	if (index_names == NIL)
		return;
	catalog_become_owner(&saved);
	if (!kind_accepted(kind))
	{
		catalog_restore_user(&saved);
		foreach(lc, index_names)
			ereport(WARNING,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("flusso index \"%s\" will not be seeded again after this change", (char *) lfirst(lc)),
					 errdetail("The flusso objects of this database predate the library, which needs them updated to record the request."),
					 errhint("Run ALTER EXTENSION flusso UPDATE, then SELECT flusso_resnapshot('%s').", (char *) lfirst(lc))));
		return;
	}
	catalog_insert_requests(kind, index_names);
	catalog_restore_user(&saved);
	request_worker_at_commit(true);
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
	PG_RETURN_DATUM(insert_signal(kind, name, detail));
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

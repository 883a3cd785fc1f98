/*-------------------------------------------------------------------------
 *
 * request.c
 *	  flusso_resnapshot(name): ask for an index to be seeded again.
 *
 * The request is a row in flusso.signal, so the worker sees it in stream
 * order, after every change committed before it.  The worker marks the
 * index for seeding in the transaction that reads the request, and
 * deletes the row once that seed is complete: a crash in between seeds
 * again rather than not at all.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/uuid.h"

#include "index/access.h"
#include "engine/engine.h"
#include "index/definition.h"
#include "common/requests.h"

PG_FUNCTION_INFO_V1(flusso_resnapshot);

Datum
flusso_resnapshot(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	StoredIndex *index;
	CatalogUser saved;
	bool		isnull;
	Datum		id;

	flusso_require_admin();
	index = index_load(name);
	flusso_require_owner(index->owner, name);

	SPI_connect();
	catalog_become_owner(&saved);
	if (SPI_execute_with_args("INSERT INTO flusso.signal (kind, index_name) "
							  "VALUES ('" SIGNAL_RESNAPSHOT "', $1) RETURNING id",
							  1, argtypes, values, NULL, false, 1) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not insert a re-snapshot request for index \"%s\"", name);
	id = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	id = SPI_datumTransfer(id, false, UUID_LEN);
	catalog_restore_user(&saved);
	SPI_finish();
	request_worker_at_commit(true);
	PG_RETURN_DATUM(id);
}

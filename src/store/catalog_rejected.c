/*-------------------------------------------------------------------------
 *
 * catalog_rejected.c
 *	  flusso.rejected, the documents OpenSearch refused for good, with its
 *	  reasons: every statement over the table, each written once, as a verb.
 *	  (Queuing them again is an outbox statement: catalog_outbox.c.)
 *
 * Each verb runs in the caller's role and transaction, in a SPI connection
 * of its own.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "store/catalog_rejected.h"
#include "util/spi_run.h"

/* How many documents of index were rejected. */
int64
catalog_count_rejected(const char *index)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(index)};

	return spi_read_int64("SELECT pg_catalog.count(*) FROM flusso.rejected "
							"WHERE index_name OPERATOR(pg_catalog.=) $1",
							1, argtypes, values);
}

/*
 * The rejected documents of index, by id, into the materialized result of
 * a set-returning function: id, version, status, error_type, reason,
 * rejected_at.
 */
static void
put_rejected(HeapTuple tuple, TupleDesc desc, void *arg)
{
	ReturnSetInfo *rsinfo = arg;
	Datum		row[6];
	bool		isnull[6];

	for (int c = 0; c < 6; c++)
		row[c] = SPI_getbinval(tuple, desc, c + 1, &isnull[c]);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row, isnull);
}

void
catalog_list_rejected(const char *index, ReturnSetInfo *rsinfo)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(index)};

	(void) spi_read("SELECT id, version, status, error_type, reason, rejected_at "
					  "FROM flusso.rejected WHERE index_name OPERATOR(pg_catalog.=) $1 ORDER BY id",
					  1, types, values, true, 0, put_rejected, rsinfo);
}

/* Record that OpenSearch rejected document id of index at version. */
void
catalog_record_rejected(const char *index, const char *id, int64 version,
						int status, const char *error_type, const char *reason)
{
	Oid			types[6] = {TEXTOID, TEXTOID, INT8OID, INT4OID, TEXTOID, TEXTOID};
	Datum		values[6];

	values[0] = CStringGetTextDatum(index);
	values[1] = CStringGetTextDatum(id);
	values[2] = Int64GetDatum(version);
	values[3] = Int32GetDatum(status);
	values[4] = CStringGetTextDatum(error_type);
	values[5] = CStringGetTextDatum(reason);
	(void) spi_run("INSERT INTO flusso.rejected AS r (index_name, id, version, status, error_type, reason) "
					 "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (index_name, id) DO UPDATE SET "
					 "version = EXCLUDED.version, status = EXCLUDED.status, "
					 "error_type = EXCLUDED.error_type, reason = EXCLUDED.reason, "
					 "rejected_at = EXCLUDED.rejected_at",
					 6, types, values, SPI_OK_INSERT);
}

/* Forget the rejected documents of index. */
void
catalog_forget_rejected(const char *index)
{
	(void) spi_run_text("DELETE FROM flusso.rejected WHERE index_name OPERATOR(pg_catalog.=) $1",
						  index, NULL, SPI_OK_DELETE);
}

/* Forget the rejected documents of index whose ids are in ids (text[]). */
void
catalog_forget_rejected_ids(const char *index, Datum ids)
{
	Oid			types[2] = {TEXTOID, TEXTARRAYOID};
	Datum		values[2] = {CStringGetTextDatum(index), ids};

	(void) spi_run("DELETE FROM flusso.rejected WHERE index_name OPERATOR(pg_catalog.=) $1 "
					 "AND id OPERATOR(pg_catalog.=) ANY ($2)",
					 2, types, values, SPI_OK_DELETE);
}

/* Forget the rejected documents of every index (a copy starts over). */
void
catalog_forget_every_rejected(void)
{
	(void) spi_run("DELETE FROM flusso.rejected", 0, NULL, NULL, SPI_OK_DELETE);
}

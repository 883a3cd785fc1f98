/*-------------------------------------------------------------------------
 *
 * catalog_capture_log.c
 *	  flusso.capture_log, the diagnostic record of applied changes (what is
 *	  recorded is worker/capture_log.c's): its one statement, an insert whose
 *	  plan is kept for the life of the process.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/pg_lsn.h"

#include "store/catalog_capture_log.h"
#include "util/spi_run.h"

/* Log one change: its keys are jsonb text.  In the caller's transaction. */
void
catalog_log_change(Oid relid, char op, Datum old_key, bool old_key_null,
				   Datum new_key, bool new_key_null,
				   TransactionId xid, XLogRecPtr commit_lsn)
{
	Oid			types[6] = {OIDOID, CHAROID, TEXTOID, TEXTOID, XIDOID, PG_LSNOID};
	Datum		values[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};

	values[0] = ObjectIdGetDatum(relid);
	values[1] = CharGetDatum(op);
	values[2] = old_key;
	nulls[2] = old_key_null ? 'n' : ' ';
	values[3] = new_key;
	nulls[3] = new_key_null ? 'n' : ' ';
	values[4] = TransactionIdGetDatum(xid);
	values[5] = LSNGetDatum(commit_lsn);
	(void) spi_run_nulls("INSERT INTO flusso.capture_log "
						   "(relid, op, old_key, new_key, xid, commit_lsn) "
						   "VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6)",
						   6, types, values, nulls, SPI_OK_INSERT);
}

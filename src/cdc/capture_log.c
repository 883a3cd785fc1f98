/*-------------------------------------------------------------------------
 *
 * capture_log.c
 *	  Writes thin changes to flusso.capture_log in the worker's transaction,
 *	  so that the acknowledgement path can be tested end to end: a change
 *	  is acknowledged only after the transaction that logged it committed.
 *	  Keys are stored as jsonb objects of column to text value (null for a
 *	  SQL NULL; absent when the WAL did not log the column).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/pg_lsn.h"

#include "cdc/capture_log.h"

static SPIPlanPtr insert_plan = NULL;

static Datum
key_json(const ThinChange *change, const ThinValue *values, bool *isnull)
{
	StringInfoData buf;
	bool		first = true;

	*isnull = values == NULL;
	if (values == NULL)
		return (Datum) 0;
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (int i = 0; i < change->ncolumns; i++)
	{
		if (values[i].kind == THIN_MISSING || values[i].kind == THIN_UNCHANGED)
			continue;
		if (!first)
			appendStringInfoString(&buf, ", ");
		first = false;
		escape_json(&buf, change->columns[i]);
		appendStringInfoString(&buf, ": ");
		if (values[i].kind == THIN_NULL)
			appendStringInfoString(&buf, "null");
		else
			escape_json(&buf, values[i].text);
	}
	appendStringInfoChar(&buf, '}');
	return CStringGetTextDatum(buf.data);
}

/* Log one change; the caller is connected to SPI inside a transaction. */
void
capture_log_write(const ThinChange *change)
{
	Datum		values[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
	bool		isnull;

	if (insert_plan == NULL)
	{
		Oid			types[6] = {OIDOID, CHAROID, TEXTOID, TEXTOID, XIDOID, PG_LSNOID};
		SPIPlanPtr	plan = SPI_prepare("INSERT INTO flusso.capture_log "
									   "(relid, op, old_key, new_key, xid, commit_lsn) "
									   "VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6)",
									   6, types);

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "could not prepare the flusso.capture_log insert: %s",
				 SPI_result_code_string(SPI_result));
		insert_plan = plan;
	}
	values[0] = ObjectIdGetDatum(change->relid);
	values[1] = CharGetDatum((char) change->op);
	values[2] = key_json(change, change->old_values, &isnull);
	nulls[2] = isnull ? 'n' : ' ';
	values[3] = key_json(change, change->new_values, &isnull);
	nulls[3] = isnull ? 'n' : ' ';
	values[4] = TransactionIdGetDatum(change->xid);
	values[5] = LSNGetDatum(change->commit_end_lsn);
	if (SPI_execute_plan(insert_plan, values, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not write to flusso.capture_log");
}

/*-------------------------------------------------------------------------
 *
 * capture_log.c
 *	  Writes thin changes to flusso.capture_log (through
 *	  store/catalog_capture_log.c) in the worker's transaction, so that the
 *	  acknowledgement path can be tested end to end: a change is
 *	  acknowledged only after the transaction that logged it committed.
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

#include "worker/capture_log.h"
#include "store/catalog_capture_log.h"

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
	Datum		old_key;
	Datum		new_key;
	bool		old_null;
	bool		new_null;

	old_key = key_json(change, change->old_values, &old_null);
	new_key = key_json(change, change->new_values, &new_null);
	catalog_log_change(change->relid, (char) change->op, old_key, old_null,
					   new_key, new_null, change->xid, change->commit_end_lsn);
}

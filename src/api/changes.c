/*-------------------------------------------------------------------------
 *
 * changes.c
 *	  SQL functions that show what the output plugin emitted:
 *	  flusso_change_text(bytea) and flusso_change(bytea), for records read
 *	  with pg_logical_slot_peek_binary_changes().
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/pg_lsn.h"
#include "utils/timestamp.h"

#include "cdc/thin_change.h"

PG_FUNCTION_INFO_V1(flusso_change_text);
PG_FUNCTION_INFO_V1(flusso_change);

/*
 * Is every name and value of a record text of the database's encoding?
 * What is rendered from the caller's bytes must be.
 */
static bool
valid_strings(const ThinChange *change)
{
	const ThinValue *rows[2] = {change->old_values, change->new_values};

	if (!pg_verifymbstr(change->nspname, strlen(change->nspname), true) ||
		!pg_verifymbstr(change->relname, strlen(change->relname), true))
		return false;
	for (int i = 0; i < change->ncolumns; i++)
	{
		if (!pg_verifymbstr(change->columns[i], strlen(change->columns[i]), true))
			return false;
		for (int r = 0; r < lengthof(rows); r++)
		{
			const ThinValue *value = rows[r] ? &rows[r][i] : NULL;

			if (value && value->kind == THIN_TEXT &&
				!pg_verifymbstr(value->text, strlen(value->text), true))
				return false;
		}
	}
	return true;
}

/*
 * Read a record passed by the caller: any bytes at all, so every length
 * is checked against what is there (cdc/thin_change.c), and every string
 * against the encoding.
 */
static void
read_argument(bytea *record, ThinChange *change)
{
	if (!thin_change_read(VARDATA_ANY(record), VARSIZE_ANY_EXHDR(record), change) ||
		!valid_strings(change))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid flusso change record"),
				 errhint("Pass a row of pg_logical_slot_peek_binary_changes() on a slot whose plugin is flusso.")));
}

/* flusso_change_text(change bytea) RETURNS text */
Datum
flusso_change_text(PG_FUNCTION_ARGS)
{
	ThinChange	change;

	read_argument(PG_GETARG_BYTEA_PP(0), &change);
	PG_RETURN_TEXT_P(cstring_to_text(thin_change_text(&change)));
}

/*
 * flusso_change(change bytea, OUT op, OUT relid, OUT schema_name,
 *				 OUT table_name, OUT xid, OUT commit_lsn, OUT commit_time)
 */
Datum
flusso_change(PG_FUNCTION_ARGS)
{
	ThinChange	change;
	TupleDesc	desc;
	Datum		values[7];
	bool		nulls[7] = {false};
	char		op[2];

	read_argument(PG_GETARG_BYTEA_PP(0), &change);
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	op[0] = (char) change.op;
	op[1] = '\0';
	values[0] = CStringGetTextDatum(op);
	values[1] = ObjectIdGetDatum(change.relid);
	values[2] = CStringGetTextDatum(change.nspname);
	values[3] = CStringGetTextDatum(change.relname);
	values[4] = TransactionIdGetDatum(change.xid);
	values[5] = LSNGetDatum(change.commit_end_lsn);
	values[6] = TimestampTzGetDatum(change.commit_time);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

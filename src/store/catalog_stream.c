/*-------------------------------------------------------------------------
 *
 * catalog_stream.c
 *	  flusso.stream, the record that the database's slot was made (what it
 *	  means is worker/slot_record.c's): every statement over the table,
 *	  each written once, as a verb.
 *
 * Each verb runs in the caller's transaction, in a SPI connection of its
 * own.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "store/catalog_stream.h"

/* Is a slot recorded? */
bool
catalog_slot_recorded(void)
{
	bool		recorded;

	SPI_connect();
	if (SPI_execute("SELECT 1 FROM flusso.stream", true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read flusso.stream");
	recorded = SPI_processed > 0;
	SPI_finish();
	return recorded;
}

/* Record that the slot of this name was made (now). */
void
catalog_record_slot(const char *slot_name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(slot_name)};

	SPI_connect();
	if (SPI_execute_with_args("INSERT INTO flusso.stream (slot_name) VALUES ($1) "
							  "ON CONFLICT (slot_name) DO UPDATE SET created_at = pg_catalog.now()",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the flusso slot");
	SPI_finish();
}

/* Forget every slot recorded. */
void
catalog_forget_slot(void)
{
	SPI_connect();
	if (SPI_execute("DELETE FROM flusso.stream", false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not forget the flusso slot");
	SPI_finish();
}

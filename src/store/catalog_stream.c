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
#include "util/spi_run.h"

/* Is a slot recorded? */
bool
catalog_slot_recorded(void)
{
	return spi_read("SELECT 1 FROM flusso.stream LIMIT 1", 0, NULL, NULL, true, 1, NULL, NULL) > 0;
}

/* Record that the slot of this name was made (now). */
void
catalog_record_slot(const char *slot_name)
{
	(void) spi_run_text("INSERT INTO flusso.stream (slot_name) VALUES ($1) "
						  "ON CONFLICT (slot_name) DO UPDATE SET created_at = pg_catalog.now()",
						  slot_name, NULL, SPI_OK_INSERT);
}

/* Forget every slot recorded. */
void
catalog_forget_slot(void)
{
	(void) spi_run("DELETE FROM flusso.stream", 0, NULL, NULL, SPI_OK_DELETE);
}

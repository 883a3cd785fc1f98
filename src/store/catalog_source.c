/*-------------------------------------------------------------------------
 *
 * catalog_source.c
 *	  flusso.source, the identity of the database flusso's state belongs
 *	  to (what a row means, and when a copy is folded, is
 *	  source/source.c's): every statement over the table, each written
 *	  once, as a verb.
 *
 * Each verb runs in the caller's role and transaction, in a SPI
 * connection of its own; what it returns is allocated in the caller's
 * memory context.  The table came with 0.7.0: the library works with the
 * older catalog until ALTER EXTENSION UPDATE, without an identity.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"

#include "store/catalog_source.h"
#include "util/spi_run.h"

/* Does the catalog have flusso.source (0.7.0 on)?  From the system caches. */
bool
catalog_source_in_catalog(void)
{
	Oid			schema = get_namespace_oid("flusso", true);

	return OidIsValid(schema) && OidIsValid(get_relname_relid("source", schema));
}

/*
 * Every row, the oldest first: read as a statement that may write, so that
 * what the caller's transaction wrote before is seen.
 */
static void
read_source(HeapTuple tuple, TupleDesc desc, void *arg)
{
	List	  **rows = arg;
	SourceRow  *row = palloc0(sizeof(SourceRow));
	bool		isnull;

	row->id = SPI_getvalue(tuple, desc, 1);
	row->system_identifier = SPI_getvalue(tuple, desc, 2);
	row->database_oid = DatumGetObjectId(SPI_getbinval(tuple, desc, 3, &isnull));
	row->database_name = SPI_getvalue(tuple, desc, 4);
	row->created_at = SPI_getvalue(tuple, desc, 5);
	row->copied_system_identifier = SPI_getvalue(tuple, desc, 6);
	row->copied_database_oid = SPI_getvalue(tuple, desc, 7);
	row->copied_database_name = SPI_getvalue(tuple, desc, 8);
	row->copied_detected_at = SPI_getvalue(tuple, desc, 9);
	*rows = lappend(*rows, row);
}

List *
catalog_source_rows(void)
{
	List	   *rows = NIL;

	(void) spi_read("SELECT id::pg_catalog.text, system_identifier, database_oid, "
					  "database_name::pg_catalog.text, created_at::pg_catalog.text, "
					  "copied_from OPERATOR(pg_catalog.->>) 'system_identifier', "
					  "copied_from OPERATOR(pg_catalog.->>) 'database_oid', "
					  "copied_from OPERATOR(pg_catalog.->>) 'database_name', "
					  "copied_from OPERATOR(pg_catalog.->>) 'detected_at' "
					  "FROM flusso.source ORDER BY created_at, id",
					  0, NULL, NULL, false, 0, read_source, &rows);
	return rows;
}

/*
 * Take the table's lock until the transaction ends: a process that claims
 * the identity waits for another one doing the same, and then sees what
 * it did.  Readers are not blocked.
 */
void
catalog_source_lock(void)
{
	(void) spi_run("LOCK TABLE flusso.source IN SHARE ROW EXCLUSIVE MODE",
					 0, NULL, NULL, SPI_OK_UTILITY);
}

/* A new identity for this database (nothing if it has one). */
void
catalog_source_insert(const char *system_identifier, Oid database_oid,
					  const char *database_name)
{
	Oid			types[3] = {TEXTOID, OIDOID, TEXTOID};
	Datum		values[3];

	values[0] = CStringGetTextDatum(system_identifier);
	values[1] = ObjectIdGetDatum(database_oid);
	values[2] = CStringGetTextDatum(database_name);
	(void) spi_run("INSERT INTO flusso.source (system_identifier, database_oid, database_name) "
					 "VALUES ($1, $2, $3::pg_catalog.name) "
					 "ON CONFLICT (system_identifier, database_oid) DO NOTHING",
					 3, types, values, SPI_OK_INSERT);
}

/*
 * The row id is this database's, a copy of copied_from (jsonb text): say
 * so in it, and forget every other row.
 */
void
catalog_source_fold(const char *id, const char *copied_from)
{
	Oid			types[2] = {UUIDOID, JSONBOID};
	Datum		values[2];

	values[0] = DirectFunctionCall1(uuid_in, CStringGetDatum(id));
	values[1] = DirectFunctionCall1(jsonb_in, CStringGetDatum(copied_from));
	(void) spi_run("UPDATE flusso.source SET copied_from = $2 WHERE id OPERATOR(pg_catalog.=) $1",
					 2, types, values, SPI_OK_UPDATE);
	(void) spi_run("DELETE FROM flusso.source WHERE id OPERATOR(pg_catalog.<>) $1",
					 1, types, values, SPI_OK_DELETE);
}

/* The database of row id is named database_name now. */
void
catalog_source_rename(const char *id, const char *database_name)
{
	Oid			types[2] = {UUIDOID, TEXTOID};
	Datum		values[2];

	values[0] = DirectFunctionCall1(uuid_in, CStringGetDatum(id));
	values[1] = CStringGetTextDatum(database_name);
	(void) spi_run("UPDATE flusso.source SET database_name = $2::pg_catalog.name "
					 "WHERE id OPERATOR(pg_catalog.=) $1",
					 2, types, values, SPI_OK_UPDATE);
}

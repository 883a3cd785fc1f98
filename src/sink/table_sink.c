/*-------------------------------------------------------------------------
 *
 * table_sink.c
 *	  Creates and drops flusso_docs.<index>(id text PRIMARY KEY, doc jsonb,
 *	  search tsvector, updated_at), owned by the index's owner, readable by
 *	  flusso_admin, with GIN indexes on doc (jsonb_path_ops, for containment
 *	  queries) and on search (full text over the text and identifier fields).
 *
 * The table is not a member of the extension: pg_dump keeps it with its
 * documents, which match the rows dumped beside them, and DROP EXTENSION
 * asks for CASCADE while indexes exist, as DROP SCHEMA would.  ensure() is
 * idempotent, so the worker can create a table that is missing.  Runs as
 * the extension's owner, who owns schema flusso_docs.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "index/access.h"
#include "sink/table_sink.h"

#define DOCS_SCHEMA "flusso_docs"

static void
run(const char *sql)
{
	if (SPI_execute(sql, false, 0) < 0)
		elog(ERROR, "could not run \"%s\"", sql);
}

void
sink_table_ensure(const char *index_name, Oid owner)
{
	char	   *table = quote_qualified_identifier(DOCS_SCHEMA, index_name);
	CatalogUser saved;

	if (OidIsValid(get_relname_relid(index_name, get_namespace_oid(DOCS_SCHEMA, false))))
		return;
	SPI_connect();
	catalog_become_owner(&saved);
	run(psprintf("CREATE TABLE %s (id pg_catalog.text PRIMARY KEY, doc pg_catalog.jsonb NOT NULL, "
				 "search pg_catalog.tsvector NOT NULL DEFAULT '', "
				 "updated_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp())",
				 table));
	run(psprintf("CREATE INDEX ON %s USING gin (doc pg_catalog.jsonb_path_ops)", table));
	run(psprintf("CREATE INDEX ON %s USING gin (search)", table));
	run(psprintf("ALTER TABLE %s OWNER TO %s", table,
				 quote_identifier(GetUserNameFromId(owner, false))));
	run(psprintf("GRANT SELECT ON %s TO %s", table, FLUSSO_ADMIN_ROLE));
	catalog_restore_user(&saved);
	SPI_finish();
}

void
sink_table_drop(const char *index_name)
{
	CatalogUser saved;

	SPI_connect();
	catalog_become_owner(&saved);
	run(psprintf("DROP TABLE IF EXISTS %s",
				 quote_qualified_identifier(DOCS_SCHEMA, index_name)));
	catalog_restore_user(&saved);
	SPI_finish();
}

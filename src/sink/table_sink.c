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
 * A seed writes into a shadow table of the same name in schema
 * flusso_seed, which has only its primary key while it fills; its GIN
 * indexes are built once, at the end, and it then replaces the documents
 * table in one transaction.
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
#include "utils/inval.h"
#include "utils/lsyscache.h"

#include "index/access.h"
#include "sink/table_sink.h"

#define DOCS_SCHEMA "flusso_docs"
#define SEED_SCHEMA "flusso_seed"

static void
run(const char *sql)
{
	if (SPI_execute(sql, false, 0) < 0)
		elog(ERROR, "could not run \"%s\"", sql);
}

/* GIN on doc (containment queries) and on search (full text) */
static void
create_secondary_indexes(const char *table)
{
	run(psprintf("CREATE INDEX ON %s USING gin (doc pg_catalog.jsonb_path_ops)", table));
	run(psprintf("CREATE INDEX ON %s USING gin (search)", table));
}

/*
 * Create the documents table of an index in schema nspname, without its
 * secondary indexes when they are to be built later, in one pass.
 */
static void
create_table(const char *nspname, const char *index_name, Oid owner, bool secondary)
{
	char	   *table = quote_qualified_identifier(nspname, index_name);

	run(psprintf("CREATE TABLE %s (id pg_catalog.text PRIMARY KEY, doc pg_catalog.jsonb NOT NULL, "
				 "search pg_catalog.tsvector NOT NULL DEFAULT '', "
				 "updated_at pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp())",
				 table));
	if (secondary)
		create_secondary_indexes(table);
	run(psprintf("ALTER TABLE %s OWNER TO %s", table,
				 quote_identifier(GetUserNameFromId(owner, false))));
	run(psprintf("GRANT SELECT ON %s TO %s", table, FLUSSO_ADMIN_ROLE));
}

void
sink_table_ensure(const char *index_name, Oid owner)
{
	CatalogUser saved;

	if (sink_table_exists(index_name, false))
		return;
	SPI_connect();
	catalog_become_owner(&saved);
	create_table(DOCS_SCHEMA, index_name, owner, true);
	catalog_restore_user(&saved);
	SPI_finish();
}

/* The table a sink of this index writes to: its documents, or its shadow. */
char *
sink_table_name(const char *index_name, bool shadow)
{
	return quote_qualified_identifier(shadow ? SEED_SCHEMA : DOCS_SCHEMA, index_name);
}

/* A fresh, empty shadow table for a seed, replacing any left behind. */
void
sink_shadow_create(const char *index_name, Oid owner)
{
	CatalogUser saved;

	SPI_connect();
	catalog_become_owner(&saved);
	if (sink_table_exists(index_name, true))
		run(psprintf("DROP TABLE %s", sink_table_name(index_name, true)));
	create_table(SEED_SCHEMA, index_name, owner, false);
	catalog_restore_user(&saved);
	SPI_finish();
}

void
sink_shadow_drop(const char *index_name)
{
	CatalogUser saved;

	SPI_connect();
	catalog_become_owner(&saved);
	run(psprintf("DROP TABLE %s", sink_table_name(index_name, true)));
	catalog_restore_user(&saved);
	SPI_finish();
}

/* Is the documents table, or the shadow, of this index there? */
bool
sink_table_exists(const char *index_name, bool shadow)
{
	return OidIsValid(get_relname_relid(index_name,
										get_namespace_oid(shadow ? SEED_SCHEMA : DOCS_SCHEMA,
														  false)));
}

/*
 * The seed is complete: build the shadow's secondary indexes, then put it
 * in the place of the documents table.  Readers see one or the other,
 * never a half-built table: the swap commits with the caller.
 */
void
sink_shadow_swap(const char *index_name)
{
	char	   *shadow = sink_table_name(index_name, true);
	CatalogUser saved;

	SPI_connect();
	catalog_become_owner(&saved);
	create_secondary_indexes(shadow);
	if (sink_table_exists(index_name, false))
		run(psprintf("DROP TABLE %s", sink_table_name(index_name, false)));
	run(psprintf("ALTER TABLE %s SET SCHEMA %s", shadow, quote_identifier(DOCS_SCHEMA)));
	catalog_restore_user(&saved);
	SPI_finish();
}

void
sink_table_drop(const char *index_name)
{
	CatalogUser saved;

	SPI_connect();
	catalog_become_owner(&saved);
	run(psprintf("DROP TABLE IF EXISTS %s", sink_table_name(index_name, false)));
	/* a seed's shadow, maybe created since this transaction's snapshot */
	AcceptInvalidationMessages();
	if (sink_table_exists(index_name, true))
		run(psprintf("DROP TABLE %s", sink_table_name(index_name, true)));
	catalog_restore_user(&saved);
	SPI_finish();
}

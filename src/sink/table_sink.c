/*-------------------------------------------------------------------------
 *
 * table_sink.c
 *	  Creates and drops flusso_docs.<index>(id text PRIMARY KEY, doc jsonb,
 *	  search tsvector, updated_at), owned by the index's owner, with GIN
 *	  indexes on doc (jsonb_path_ops, for containment queries) and on search
 *	  (full text over the text and identifier fields).
 *
 * Documents hold what the index reads with its owner's rights, so only
 * the owner reads them, and whom the owner grants SELECT to: the grants
 * are carried over when a seed puts a new table in place.
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
 * table in one transaction.  Meanwhile live changes are written to both
 * tables, so readers of the documents table never see frozen documents.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"

#include "util/pinned.h"
#include "settings.h"
#include "document/search_vector.h"
#include "sink/table_sink.h"


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
}

/*
 * Grant on table to what the documents table of index_name grants: the
 * privileges its owner gave other roles outlive a seed.  (Column
 * privileges do not.)
 */
static void
copy_grants(const char *index_name, const char *table)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1];
	List	   *grants = NIL;
	ListCell   *lc;

	values[0] = ObjectIdGetDatum(get_relname_relid(index_name,
												   get_namespace_oid(FLUSSO_DOCS_SCHEMA, false)));
	if (SPI_execute_with_args("SELECT a.grantee, a.privilege_type, a.is_grantable "
							  "FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a "
							  "WHERE c.oid OPERATOR(pg_catalog.=) $1 "
							  "AND a.grantee OPERATOR(pg_catalog.<>) c.relowner",
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the privileges of the documents of index \"%s\"", index_name);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[i];
		bool		isnull;
		Oid			grantee = DatumGetObjectId(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 1, &isnull));

		grants = lappend(grants,
						 psprintf("GRANT %s ON %s TO %s%s",
								  SPI_getvalue(tuple, SPI_tuptable->tupdesc, 2), table,
								  OidIsValid(grantee)
								  ? quote_identifier(GetUserNameFromId(grantee, false)) : "PUBLIC",
								  DatumGetBool(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 3, &isnull))
								  ? " WITH GRANT OPTION" : ""));
	}
	foreach(lc, grants)
		run(lfirst(lc));
}

/* The table of an index's documents, or of the next generation. */
static char *
table_name(const char *index, bool next)
{
	return quote_qualified_identifier(next ? FLUSSO_SEED_SCHEMA : FLUSSO_DOCS_SCHEMA, index);
}

static bool
table_exists(const char *index, bool next)
{
	return OidIsValid(get_relname_relid(index,
										get_namespace_oid(next ? FLUSSO_SEED_SCHEMA : FLUSSO_DOCS_SCHEMA,
														  false)));
}

static bool
table_sink_exists(const IndexSink *sink)
{
	return table_exists(sink->index, false);
}

/* The documents table of an index, when it is missing. */
static void
table_sink_create(const IndexSink *sink)
{
	CatalogUser saved;

	if (table_exists(sink->index, false))
		return;
	SPI_connect();
	catalog_become_owner(&saved);
	create_table(FLUSSO_DOCS_SCHEMA, sink->index, sink->owner, true);
	catalog_restore_user(&saved);
	SPI_finish();
}

/* A documents table missing is created empty: no seed is asked for. */
static bool
table_sink_needs_seed(const IndexSink *sink)
{
	return false;
}

/*
 * Write the documents that built and changed (with their tsvector) into
 * one generation's table, and delete those of the ids at hand that built
 * nothing.  The current generation holds most of them: its rows are
 * updated in place where the document changed, left alone where it did
 * not (neither locked nor written), and the rest inserted.  An upsert
 * would lock each row it updates first, 54 bytes of WAL more a document,
 * and probe the table twice.  The inserted rows are those the statement's
 * snapshot does not see, so the update and the insert never take the same
 * row; the insert still upserts, in case another transaction inserted the
 * row since (the worker is the table's only writer, but its owner may
 * write too).  A seed's chunks fill a next generation that holds few, by
 * upserts.  The CTEs are named after the generation, and return the id
 * of each document they changed.
 */
static void
write_generation(StringInfo sql, List **ctes, const IndexSink *sink, bool next, int ids_param)
{
	char	   *table = table_name(sink->index, next);
	const char *search = doc_search_expr(sink->schema, "built.doc");
	const char *up = next ? "table_next_up" : "table_up";
	const char *add = next ? "table_next_add" : "table_add";
	const char *del = next ? "table_next_del" : "table_del";
	const char *upsert = "ON CONFLICT (id) DO UPDATE SET doc = EXCLUDED.doc, search = EXCLUDED.search, "
		"updated_at = pg_catalog.clock_timestamp() WHERE s.doc IS DISTINCT FROM EXCLUDED.doc RETURNING s.id";

	if (next)
		appendStringInfo(sql, ", %s AS (INSERT INTO %s AS s (id, doc, search) "
						 "SELECT id, doc, %s FROM built %s)",
						 add, table, search, upsert);
	else
		appendStringInfo(sql,
						 ", %s AS (UPDATE %s s SET doc = built.doc, search = %s, "
						 "updated_at = pg_catalog.clock_timestamp() FROM built "
						 "WHERE s.id OPERATOR(pg_catalog.=) built.id AND s.doc IS DISTINCT FROM built.doc "
						 "RETURNING s.id), "
						 "%s AS (INSERT INTO %s AS s (id, doc, search) SELECT id, doc, %s FROM built "
						 "WHERE NOT EXISTS (SELECT 1 FROM %s o WHERE o.id OPERATOR(pg_catalog.=) built.id) %s)",
						 up, table, search, add, table, search, table, upsert);
	appendStringInfo(sql,
					 ", %s AS (DELETE FROM %s s WHERE s.id OPERATOR(pg_catalog.=) ANY($%d::pg_catalog.text[]) "
					 "AND NOT EXISTS (SELECT 1 FROM built b WHERE b.id OPERATOR(pg_catalog.=) s.id) RETURNING s.id)",
					 del, table, ids_param);
	if (!next)
		*ctes = lappend(*ctes, (char *) up);
	*ctes = lappend(*ctes, (char *) add);
	*ctes = lappend(*ctes, (char *) del);
}

static void
table_sink_write_ctes(StringInfo sql, List **ctes, const IndexSink *sink,
					  SinkTarget target, int ids_param)
{
	if (target != SINK_NEXT)
		write_generation(sql, ctes, sink, false, ids_param);
	if (target != SINK_CURRENT)
		write_generation(sql, ctes, sink, true, ids_param);
}

/* Every document gone: the root table was truncated. */
static void
table_sink_truncate(const IndexSink *sink, SinkTarget target, XLogRecPtr version)
{
	SPI_connect();
	if (target != SINK_NEXT)
		run(psprintf("DELETE FROM %s", table_name(sink->index, false)));
	if (target != SINK_CURRENT)
		run(psprintf("DELETE FROM %s", table_name(sink->index, true)));
	SPI_finish();
}

/* A fresh, empty shadow table for a seed, replacing any left behind. */
static void
table_sink_next_begin(const IndexSink *sink)
{
	CatalogUser saved;

	SPI_connect();
	catalog_become_owner(&saved);
	if (table_exists(sink->index, true))
		run(psprintf("DROP TABLE %s", table_name(sink->index, true)));
	create_table(FLUSSO_SEED_SCHEMA, sink->index, sink->owner, false);
	catalog_restore_user(&saved);
	SPI_finish();
}

static bool
table_sink_next_exists(const IndexSink *sink)
{
	return table_exists(sink->index, true);
}

static void
table_sink_next_discard(const IndexSink *sink)
{
	CatalogUser saved;

	if (!table_exists(sink->index, true))
		return;
	SPI_connect();
	catalog_become_owner(&saved);
	run(psprintf("DROP TABLE %s", table_name(sink->index, true)));
	catalog_restore_user(&saved);
	SPI_finish();
}

/*
 * The seed is complete: build the shadow's secondary indexes, then put it
 * in the place of the documents table, with the documents table's grants.
 * Readers see one or the other, never a half-built table: the swap
 * commits with the caller.
 */
static void
table_sink_next_swap(const IndexSink *sink)
{
	const char *index = sink->index;
	char	   *shadow = table_name(index, true);
	CatalogUser saved;

	SPI_connect();
	catalog_become_owner(&saved);
	create_secondary_indexes(shadow);
	if (table_exists(index, false))
	{
		copy_grants(index, shadow);
		run(psprintf("DROP TABLE %s", table_name(index, false)));
	}
	run(psprintf("ALTER TABLE %s SET SCHEMA %s", shadow, quote_identifier(FLUSSO_DOCS_SCHEMA)));
	catalog_restore_user(&saved);
	SPI_finish();
}

/*
 * The table sink is turned off: the documents table stays, empty, since
 * the index lives as long as it and follows its owner (hooks/follow.c);
 * a seed's shadow goes.
 */
void
table_sink_empty(const IndexSink *sink)
{
	CatalogUser saved;

	SPI_connect();
	catalog_become_owner(&saved);
	if (table_exists(sink->index, false))
		run(psprintf("TRUNCATE %s", table_name(sink->index, false)));
	if (table_exists(sink->index, true))
		run(psprintf("DROP TABLE %s", table_name(sink->index, true)));
	catalog_restore_user(&saved);
	SPI_finish();
}

/* Both tables; there is nothing to keep elsewhere. */
static void
table_sink_drop(const IndexSink *sink, bool keep)
{
	const char *index = sink->index;
	CatalogUser saved;

	SPI_connect();
	catalog_become_owner(&saved);
	if (table_exists(index, false))
		run(psprintf("DROP TABLE %s", table_name(index, false)));
	/* a seed's shadow, maybe created since this transaction's snapshot */
	AcceptInvalidationMessages();
	if (table_exists(index, true))
		run(psprintf("DROP TABLE %s", table_name(index, true)));
	catalog_restore_user(&saved);
	SPI_finish();
}

const SinkOps table_sink_ops = {
	.name = "table",
	.exists = table_sink_exists,
	.create = table_sink_create,
	.needs_seed = table_sink_needs_seed,
	.drop = table_sink_drop,
	.write_ctes = table_sink_write_ctes,
	.truncate = table_sink_truncate,
	.next_begin = table_sink_next_begin,
	.next_exists = table_sink_next_exists,
	.next_discard = table_sink_next_discard,
	.next_swap = table_sink_next_swap,
};

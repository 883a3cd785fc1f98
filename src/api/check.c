/*-------------------------------------------------------------------------
 *
 * check.c
 *	  flusso_check(): every index's declared schema against the live
 *	  catalog, plus the environment flusso runs in.
 *
 * Create validates a definition's format only; what it names is judged
 * here, each time check runs: names and types (the binding's walk,
 * binding/tables.c), whether change records carry the keys flusso needs
 * (identity.c), whether the publication streams every table read,
 * whether the WAL carries its changes at all (binding/logged.c), whether
 * an index serves each column rows are found by (lookups.c), whether its
 * documents are slow to build (what the worker measured), and whether
 * the OpenSearch sink can ship (opensearch.c).  Nothing is changed but an index created in
 * OpenSearch to try the mapping, and deleted again.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "check/environment.h"
#include "check/identity.h"
#include "binding/logged.h"
#include "check/lookups.h"
#include "check/opensearch.h"
#include "binding/privileges.h"
#include "binding/publication.h"
#include "binding/ready.h"
#include "binding/tables.h"
#include "util/access.h"
#include "util/attempt.h"
#include "compat.h"
#include "document/build.h"
#include "document/resolve.h"
#include "settings.h"
#include "ipc/shared.h"
#include "store/catalog_index.h"
#include "sink/sink.h"

PG_FUNCTION_INFO_V1(flusso_check);

static char *
join_names(List *names)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, names)
		appendStringInfo(&buf, "%s\"%s\"", buf.len ? ", " : "", (char *) lfirst(lc));
	return buf.data;
}

/* Do the table's change records carry what flusso needs? */
static void
check_identity(DiagnosticSink *sink, const TableUse *table)
{
	TableIdentity identity;
	List	   *missing_keys;
	List	   *missing_old;
	List	   *needed = list_concat_copy(table->key_columns, table->old_key_columns);

	identity_of(table->relid, &identity);
	if (!identity.usable)
	{
		diag_add(sink, SEVERITY_ERROR, table->path,
				 psprintf("%s;", identity_fix_sql(table->relid, needed)),
				 "table \"%s\" has no usable replica identity, so its updates and deletes cannot be streamed",
				 table->display);
		return;
	}
	missing_keys = identity_missing(&identity, table->relid, table->key_columns);
	if (missing_keys != NIL)
		diag_add(sink, SEVERITY_ERROR, table->path,
				 psprintf("%s;", identity_fix_sql(table->relid, needed)),
				 "the replica identity of table \"%s\" does not include %s, so a delete could not name its document",
				 table->display, join_names(missing_keys));
	missing_old = identity_missing(&identity, table->relid, table->old_key_columns);
	if (missing_old != NIL)
		diag_add(sink, SEVERITY_WARNING, table->path,
				 psprintf("%s;", identity_fix_sql(table->relid, needed)),
				 "the replica identity of table \"%s\" does not include %s, so deleting or re-parenting one of its rows could not rebuild the old parent",
				 table->display, join_names(missing_old));
}

/* Does the publication stream every change flusso needs from the table? */
static void
check_published(DiagnosticSink *sink, const TableUse *table, const PublicationState *pub)
{
	PublishedTable *published = publication_find(pub, table->relid);
	char	   *qualified = publication_table_sql(table->relid,
												 quote_qualified_identifier(table->nspname,
																			table->relname));
	List	   *unpublished;

	if (published == NULL)
	{
		diag_add(sink, SEVERITY_ERROR, table->path,
				 psprintf("SELECT * FROM flusso_provision(); adds it, or: ALTER PUBLICATION %s ADD TABLE %s;",
						  quote_identifier(pub->name), qualified),
				 "table \"%s\" is not in publication \"%s\"", table->display, pub->name);
		return;
	}
	if (published->rowfilter)
		diag_add(sink, SEVERITY_ERROR, table->path,
				 psprintf("Publish every row: ALTER PUBLICATION %s DROP TABLE %s; ALTER PUBLICATION %s ADD TABLE %s;",
						  quote_identifier(pub->name), qualified,
						  quote_identifier(pub->name), qualified),
				 "publication \"%s\" publishes only the rows of table \"%s\" where %s, so changes to other rows would be missed",
				 pub->name, table->display, published->rowfilter);
	unpublished = publication_unpublished_columns(published, table->columns);
	if (unpublished != NIL)
		diag_add(sink, SEVERITY_ERROR, table->path,
				 psprintf("Publish every column: ALTER PUBLICATION %s DROP TABLE %s; ALTER PUBLICATION %s ADD TABLE %s;",
						  quote_identifier(pub->name), qualified,
						  quote_identifier(pub->name), qualified),
				 "publication \"%s\" does not publish column %s of table \"%s\"",
				 pub->name, join_names(unpublished), table->display);
}

/*
 * A partition named where its partitioned table belongs, a partition that
 * is a foreign table (whose rows no WAL records), and a partitioned table
 * published as its partitions.
 */
static void
check_partitioning(DiagnosticSink *sink, const TableUse *table, const PublicationState *pub)
{
	if (get_rel_relispartition(table->relid))
	{
		Oid			root = llast_oid(get_partition_ancestors(table->relid));
		char	   *qualified = quote_qualified_identifier(get_namespace_name(get_rel_namespace(root)),
														   get_rel_name(root));

		diag_add(sink, SEVERITY_WARNING, table->path,
				 psprintf("Name the partitioned table %s instead, with a filter on its partition key to keep these rows only.",
						  qualified),
				 "table \"%s\" is a partition of %s: a row that an UPDATE of the partition key moves to another partition leaves the index as if deleted",
				 table->display, qualified);
	}
	if (get_rel_relkind(table->relid) == RELKIND_PARTITIONED_TABLE)
	{
		ListCell   *lc;

		foreach(lc, find_all_inheritors(table->relid, AccessShareLock, NULL))
		{
			Oid			partition = lfirst_oid(lc);

			if (get_rel_relkind(partition) != RELKIND_FOREIGN_TABLE)
				continue;
			diag_add(sink, SEVERITY_WARNING, table->path,
					 "Keep the rows the index reads in partitions that are tables, or run flusso_resnapshot() after they change.",
					 "partition %s of table \"%s\" is a foreign table: its rows change without a trace in the WAL, so its documents are not kept up to date",
					 quote_qualified_identifier(get_namespace_name(get_rel_namespace(partition)),
												get_rel_name(partition)),
					 table->display);
		}
	}
	if (pub->exists && !pub->via_root &&
		get_rel_relkind(table->relid) == RELKIND_PARTITIONED_TABLE)
		diag_add(sink, SEVERITY_INFO, table->path,
				 psprintf("SELECT * FROM flusso_provision(); sets it, or: ALTER PUBLICATION %s SET (publish_via_partition_root = true);",
						  quote_identifier(pub->name)),
				 "publication \"%s\" publishes the partitions of partitioned table \"%s\" rather than the table: flusso follows either, other subscribers of the publication see partitions",
				 pub->name, table->display);
}

/*
 * Does the index's owner exist, and may it read every column the index
 * reads?  True when not.
 */
static bool
check_owner(DiagnosticSink *sink, const StoredIndex *index, List *tables)
{
	char	   *problem = owner_problem(index->owner);
	bool		failed = false;
	ListCell   *lc;

	if (problem)
	{
		diag_add(sink, SEVERITY_ERROR, "",
				 "Replace the index as another role with flusso_create_index(..., replace => true), or drop it.",
				 "%s", problem);
		return true;
	}
	foreach(lc, tables)
	{
		TableUse   *table = lfirst(lc);
		const char *role = quote_identifier(GetUserNameFromId(index->owner, false));

		problem = table_privilege_problem(table, index->owner);
		if (problem == NULL)
			continue;
		diag_add(sink, SEVERITY_ERROR, table->path,
				 compat_namespace_aclcheck(get_rel_namespace(table->relid), index->owner,
									   ACL_USAGE) != ACLCHECK_OK
				 ? psprintf("GRANT USAGE ON SCHEMA %s TO %s;",
							quote_identifier(table->nspname), role)
				 : psprintf("GRANT SELECT ON %s TO %s;",
							quote_qualified_identifier(table->nspname, table->relname), role),
				 "%s, so the index cannot be built", problem);
		failed = true;
	}
	return failed;
}

typedef struct PreparedBuild
{
	const StoredIndex *index;
} PreparedBuild;

/* Generate the index's build statement and have the parser accept it. */
static void
prepare_build(void *arg)
{
	const StoredIndex *index = ((PreparedBuild *) arg)->index;
	DocumentQuery *query = doc_build_query(index->schema);
	IndexResolver *resolver = doc_compile_resolver(index->schema);

	/* what the worker runs, as it runs it */
	bind_index_statements(index, query, resolver,
						   sink_write_sql(sink_for_index(index->name, index->owner, index->schema),
										  SINK_CURRENT, query->sql,
										  query->nparams + query->nkeys + 1));
}

/*
 * The statement that builds the index's documents must prepare: a raw
 * filter that does not parse, or a column the system catalogs no longer
 * have, would otherwise fail every batch.  Only tried when every name and
 * type of the index checked out, since those errors say more.
 */
static void
check_build(DiagnosticSink *sink, const StoredIndex *index)
{
	PreparedBuild build = {index};
	char	   *failure;

	if (!attempt(prepare_build, &build, &failure))
		diag_add(sink, SEVERITY_ERROR, "", "Correct the definition, or the database, so that the statement prepares.",
				 "the statement that builds the documents does not prepare: %s", failure);
}

/*
 * What the worker measured of the index's builds lately (shared memory):
 * one whose documents cost SLOW_BUILD_MS or more each builds fewer than a
 * hundred a second, falls behind alone under any load (its turns are
 * bounded, engine/owed.c), and is set aside should one build outlast
 * flusso.build_timeout.
 */
#define SLOW_BUILD_MS 10.0

static void
check_build_cost(DiagnosticSink *sink, const StoredIndex *index)
{
	DatabaseEntry *entry;
	IndexStatus *status;
	double		build_ms = 0;
	int64		owed = 0;
	TimestampTz owed_since = 0;

	if (flusso_shared == NULL)
		return;
	LWLockAcquire(flusso_shared->lock, LW_SHARED);
	entry = shared_database(MyDatabaseId, false);
	status = entry ? shared_index_status(entry, index->name) : NULL;
	if (status)
	{
		build_ms = status->build_ms;
		owed = status->owed;
		owed_since = status->owed_since;
	}
	LWLockRelease(flusso_shared->lock);
	if (build_ms < SLOW_BUILD_MS)
		return;
	diag_add(sink, SEVERITY_WARNING, "",
			 psprintf("EXPLAIN ANALYZE what flusso_build('%s', id) runs for a few ids: a raw filter calling a costly function, a correlated subquery or a join without an index is the usual cost. flusso.build_timeout (%d ms) bounds one build.",
					  index->name, flusso_build_timeout),
			 "the documents of this index are slow to build: %.1f ms each lately, so it builds about %.0f a second; it owes " INT64_FORMAT "%s",
			 build_ms, 1000.0 / build_ms, owed,
			 owed > 0 && owed_since != 0
			 ? psprintf(", the oldest for %.0f s, and falls behind alone",
						(double) (GetCurrentTimestamp() - owed_since) / USECS_PER_SEC)
			 : "");
}

/*
 * flusso_check() RETURNS TABLE(index text, path text, severity text,
 *							  message text, hint text)
 */
Datum
flusso_check(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DiagnosticSink sink = {NIL, NULL};
	PublicationState pub;
	ListCell   *lc;

	flusso_require_admin();
	InitMaterializedSRF(fcinfo, 0);

	publication_load(flusso_publication, &pub);
	check_environment(&sink, &pub);

	foreach(lc, catalog_load_indexes())
	{
		StoredIndex *index = lfirst(lc);
		ListCell   *tc;

		int			before = list_length(sink.items);
		bool		name_errors = false;
		List	   *tables;

		sink.index = index->name;
		tables = bind_index_tables(index->schema, &sink);
		for (int i = before; i < list_length(sink.items); i++)
			name_errors |= ((Diagnostic *) list_nth(sink.items, i))->severity == SEVERITY_ERROR;
		if (!name_errors)
			lookups_add_resolved(&tables, index->schema);
		foreach(tc, tables)
		{
			TableUse   *table = lfirst(tc);

			check_identity(&sink, table);
			if (pub.exists)
				check_published(&sink, table, &pub);
			check_partitioning(&sink, table, &pub);
			bind_logged(&sink, table);
			check_lookups(&sink, table);
		}
		name_errors |= check_owner(&sink, index, tables);
		if (!name_errors)
			check_build(&sink, index);
		check_build_cost(&sink, index);
		check_opensearch(&sink, index);
	}

	foreach(lc, sink.items)
	{
		Diagnostic *diag = lfirst(lc);
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};

		values[0] = diag->index ? CStringGetTextDatum(diag->index) : (Datum) 0;
		nulls[0] = diag->index == NULL;
		values[1] = CStringGetTextDatum(diag->path);
		values[2] = CStringGetTextDatum(severity_name(diag->severity));
		values[3] = CStringGetTextDatum(diag->message);
		values[4] = diag->hint ? CStringGetTextDatum(diag->hint) : (Datum) 0;
		nulls[4] = diag->hint == NULL;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

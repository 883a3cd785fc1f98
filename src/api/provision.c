/*-------------------------------------------------------------------------
 *
 * provision.c
 *	  flusso_provision(): create what the indexes need to be streamed, where
 *	  the calling role may, and say exactly what to run where it may not.
 *
 * The function is SECURITY INVOKER: each statement runs with the caller's
 * rights, in its own subtransaction and under a short lock_timeout, so a
 * missing privilege or a busy table becomes a row with a blocker, never an
 * error.  Privileges are also checked beforehand, so the blocker names the
 * missing right rather than repeating a permission error.
 *
 * Order matters: a table is never published before it has a usable replica
 * identity, since publishing it would make the user's own UPDATE and DELETE
 * on it fail.  An OpenSearch sink's needs come last: USAGE on its server,
 * and a user mapping when the cluster asks for credentials.  Server
 * settings, the indexes that would serve the columns rows are found by,
 * and the replication slot are only reported: ALTER SYSTEM and CREATE
 * INDEX CONCURRENTLY cannot run in a function (and an index on a large
 * table is the operator's to schedule), and the worker creates its slot.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

#include "util/access.h"
#include "util/attempt.h"
#include "check/environment.h"
#include "check/identity.h"
#include "check/lookups.h"
#include "binding/publication.h"
#include "binding/tables.h"
#include "compat.h"
#include "settings.h"
#include "store/catalog_index.h"
#include "opensearch/api.h"
#include "sink/sink.h"

PG_FUNCTION_INFO_V1(flusso_provision);

#define PROVISION_DEADLOCK_TIMEOUT "50ms"
#define PROVISION_LOCK_TIMEOUT "5s"

typedef struct Provisioner
{
	ReturnSetInfo *rsinfo;
	Oid			role;
	bool		superuser;
	char	   *role_name;
} Provisioner;

static void
emit(Provisioner *p, const char *action, const char *sql, bool applied,
	 const char *blocker)
{
	Datum		values[4];
	bool		nulls[4] = {false, sql == NULL, false, blocker == NULL};

	values[0] = CStringGetTextDatum(action);
	values[1] = sql ? CStringGetTextDatum(sql) : (Datum) 0;
	values[2] = BoolGetDatum(applied);
	values[3] = blocker ? CStringGetTextDatum(blocker) : (Datum) 0;
	tuplestore_putvalues(p->rsinfo->setResult, p->rsinfo->setDesc, values, nulls);
}

/*
 * One statement, under a short lock_timeout that ends with it, and a
 * short deadlock_timeout: ALTER TABLE waits for the application's locks,
 * and when its wait closes a deadlock with them, it finds the deadlock
 * first and is the one that fails (reported as its blocker) rather than
 * the application's transaction.
 */
static void
run_statement(void *arg)
{
	const char *sql = arg;

	/* GUC_ACTION_SAVE: reverted when attempt()'s subtransaction ends */
	(void) set_config_option("lock_timeout", PROVISION_LOCK_TIMEOUT,
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	(void) set_config_option("deadlock_timeout", PROVISION_DEADLOCK_TIMEOUT,
							 PGC_SUSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	SPI_connect();
	if (SPI_execute(sql, false, 0) < 0)
		elog(ERROR, "could not run \"%s\"", sql);
	SPI_finish();
}

/* Apply sql unless blocker is set; emit the row either way. */
static bool
apply(Provisioner *p, const char *action, const char *sql, const char *blocker)
{
	char	   *failure = NULL;

	if (blocker == NULL && attempt(run_statement, (void *) sql, &failure))
	{
		emit(p, action, sql, true, NULL);
		return true;
	}
	emit(p, action, sql, false, blocker ? blocker : failure);
	return false;
}

static char *
not_owner(Provisioner *p, const TableUse *table)
{
	if (p->superuser || compat_owns_relation(table->relid, p->role))
		return NULL;
	return psprintf("role %s does not own table %s", p->role_name, table->display);
}

/* Every table any index reads, merged, plus flusso's signal table. */
static List *
tables_needed(List *indexes)
{
	List	   *tables = NIL;
	ListCell   *lc;
	Oid			signal;
	TableUse   *use;

	foreach(lc, indexes)
	{
		StoredIndex *index = lfirst(lc);
		DiagnosticSink ignored = {NIL, index->name};
		ListCell   *tc;
		ListCell   *lc2;

		foreach(tc, bind_index_tables(index->schema, &ignored))
		{
			TableUse   *found = lfirst(tc);

			use = table_use_merge(&tables, found->relid, found->path);
			table_use_add_names(&use->key_columns, found->key_columns);
			table_use_add_names(&use->old_key_columns, found->old_key_columns);
			table_use_add_names(&use->columns, found->columns);
			foreach(lc2, found->lookups)
			{
				TableLookup *lookup = lfirst(lc2);

				table_use_add_lookup(use, lookup->column, lookup->changed);
			}
		}
		lookups_add_resolved(&tables, index->schema);
	}
	signal = get_relname_relid("signal", get_namespace_oid(FLUSSO_SCHEMA, false));
	(void) table_use_merge(&tables, signal, "flusso.signal");
	return tables;
}

/* Give each table an identity that logs its keys and old parent keys. */
static void
provision_identities(Provisioner *p, List *tables)
{
	ListCell   *lc;

	foreach(lc, tables)
	{
		TableUse   *table = lfirst(lc);
		TableIdentity identity;
		List	   *needed = list_concat_copy(table->key_columns, table->old_key_columns);

		identity_of(table->relid, &identity);
		if (identity.usable && identity_missing(&identity, table->relid, needed) == NIL)
			continue;
		apply(p, psprintf("replica identity %s", table->display),
			  identity_fix_sql(table->relid, needed), not_owner(p, table));
	}
}

/*
 * An index for each column rows are found by that none leads with: only
 * said, since CREATE INDEX CONCURRENTLY cannot run in a function (and a
 * plain CREATE INDEX would block the table's writes while it builds).
 */
static void
provision_lookup_indexes(Provisioner *p, List *tables)
{
	ListCell   *lc;

	foreach(lc, tables)
	{
		ListCell   *mc;

		foreach(mc, lookups_missing(lfirst(lc)))
		{
			MissingIndex *missing = lfirst(mc);

			emit(p, missing->action, missing->sql, false,
				 "CREATE INDEX CONCURRENTLY cannot run in a function or a transaction, and building an index on a large table takes time and I/O: run it when it suits");
		}
	}
}

static bool
reads_partitioned(List *tables)
{
	ListCell   *lc;

	foreach(lc, tables)
	{
		if (get_rel_relkind(((TableUse *) lfirst(lc))->relid) == RELKIND_PARTITIONED_TABLE)
			return true;
	}
	return false;
}

/*
 * The publication, created publishing partitioned tables as themselves
 * (as other subscribers expect; flusso follows either), with every action,
 * and every table the indexes read in it, with every row and column.
 */
static void
provision_publication(Provisioner *p, List *tables)
{
	PublicationState pub;
	const char *pubname = quote_identifier(flusso_publication);
	bool		may_alter;
	ListCell   *lc;

	publication_load(flusso_publication, &pub);
	if (!pub.exists)
	{
		char	   *blocker = NULL;

		if (!p->superuser &&
			compat_database_aclcheck(MyDatabaseId, p->role, ACL_CREATE) != ACLCHECK_OK)
			blocker = psprintf("role %s lacks CREATE on database %s", p->role_name,
							   get_database_name(MyDatabaseId));
		if (apply(p, psprintf("create publication %s", flusso_publication),
				  psprintf("CREATE PUBLICATION %s WITH (publish_via_partition_root = true)",
						   pubname), blocker))
			publication_load(flusso_publication, &pub);
	}
	else if (!pub.via_root && reads_partitioned(tables))
		apply(p, psprintf("publish partitioned tables as themselves on %s", flusso_publication),
			  psprintf("ALTER PUBLICATION %s SET (publish_via_partition_root = true)", pubname),
			  p->superuser || compat_owns_publication(pub.oid, p->role) ? NULL
			  : psprintf("role %s does not own publication %s", p->role_name, flusso_publication));
	if (pub.exists && pub.missing_actions)
		apply(p, psprintf("publish every action on %s", flusso_publication),
			  psprintf("ALTER PUBLICATION %s SET (publish = 'insert, update, delete, truncate')",
					   pubname),
			  p->superuser || compat_owns_publication(pub.oid, p->role) ? NULL
			  : psprintf("role %s does not own publication %s", p->role_name, flusso_publication));
	if (pub.all_tables)
		return;
	may_alter = pub.exists && (p->superuser || compat_owns_publication(pub.oid, p->role));

	foreach(lc, tables)
	{
		TableUse   *table = lfirst(lc);
		PublishedTable *published = pub.exists ? publication_find(&pub, table->relid) : NULL;
		char	   *qualified = publication_table_sql(table->relid,
														 quote_qualified_identifier(table->nspname,
																					table->relname));
		TableIdentity identity;
		char	   *blocker;

		if (published && published->rowfilter == NULL &&
			publication_unpublished_columns(published, table->columns) == NIL)
			continue;

		identity_of(table->relid, &identity);
		if (!identity.usable)
			blocker = psprintf("table %s has no usable replica identity: publishing it would make its UPDATE and DELETE fail",
							   table->display);
		else if (!pub.exists)
			blocker = psprintf("publication %s does not exist", flusso_publication);
		else if (!may_alter)
			blocker = psprintf("role %s does not own publication %s", p->role_name,
							   flusso_publication);
		else
			blocker = not_owner(p, table);

		if (published == NULL)
			apply(p, psprintf("publish %s", table->display),
				  identity.usable
				  ? psprintf("ALTER PUBLICATION %s ADD TABLE %s", pubname, qualified)
				  : psprintf("%s; ALTER PUBLICATION %s ADD TABLE %s",
							 identity_fix_sql(table->relid, NIL), pubname, qualified),
				  blocker);
		else
			apply(p, psprintf("publish every row and column of %s", table->display),
				  psprintf("ALTER PUBLICATION %s DROP TABLE %s; ALTER PUBLICATION %s ADD TABLE %s",
						   pubname, qualified, pubname, qualified),
				  blocker);
	}
}

/*
 * What an index's OpenSearch sink needs of PostgreSQL: USAGE on the
 * server for the index's owner (granted where the caller may), and a user
 * mapping when the cluster asks for credentials (only said: the
 * credentials are for the owner to give).
 */
static void
provision_opensearch(Provisioner *p, List *indexes)
{
	ListCell   *lc;

	foreach(lc, indexes)
	{
		StoredIndex *index = lfirst(lc);
		IndexSink  *sink = sink_for_index(index->name, index->owner, NULL);
		char	   *owner = GetUserNameFromId(index->owner, false);
		OpenSearchServer *server;
		HttpRequest *req;

		if (sink->server == NULL ||
			(server = os_server_load(sink->server, index->owner, true)) == NULL)
			continue;
		if (!os_server_usable_by(sink->server, index->owner))
			apply(p, psprintf("usage on server %s for %s", sink->server, owner),
				  psprintf("GRANT USAGE ON FOREIGN SERVER %s TO %s", quote_identifier(sink->server),
						   quote_identifier(owner)), NULL);
		if (server->has_mapping)
			continue;
		req = os_cluster_info(server);
		if (req->status == 401 || req->status == 403)
			emit(p, psprintf("user mapping for %s on server %s", owner, sink->server),
				 psprintf("CREATE USER MAPPING FOR %s SERVER %s OPTIONS (user '...', password '...')",
						  quote_identifier(owner), quote_identifier(sink->server)),
				 false, "the cluster asks for credentials: only their owner can give them");
	}
}

/* flusso_provision() RETURNS TABLE(action, sql, applied, blocker) */
Datum
flusso_provision(PG_FUNCTION_ARGS)
{
	Provisioner p;
	List	   *indexes;
	ListCell   *lc;
	char	   *plugin;

	flusso_require_admin();
	InitMaterializedSRF(fcinfo, 0);
	p.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	p.role = GetUserId();
	p.superuser = superuser();
	p.role_name = GetUserNameFromId(p.role, false);

	foreach(lc, environment_setting_fixes())
	{
		SettingFix *fix = lfirst(lc);

		emit(&p, psprintf("set %s", fix->name),
			 fix->needs_restart ? fix->sql : psprintf("%s; SELECT pg_reload_conf()", fix->sql),
			 false,
			 fix->needs_restart
			 ? "ALTER SYSTEM cannot run in a function, and the setting takes effect after a server restart"
			 : "ALTER SYSTEM cannot run in a function; a configuration reload then applies it");
	}

	indexes = catalog_load_indexes();
	if (indexes == NIL)
		return (Datum) 0;

	{
		List	   *tables = tables_needed(indexes);

		provision_identities(&p, tables);
		provision_publication(&p, tables);
		provision_lookup_indexes(&p, tables);
	}
	provision_opensearch(&p, indexes);

	if (!environment_slot_exists(&plugin))
		emit(&p, psprintf("replication slot %s", environment_slot_name()), NULL, false,
			 "the flusso worker creates its own slot when it starts");
	return (Datum) 0;
}

/*-------------------------------------------------------------------------
 *
 * environment.c
 *	  The environment rows of flusso_check() and the settings rows of
 *	  flusso_provision().
 *
 * Settings are read with GetConfigOption(name, true, false): a setting
 * that this server version does not have (output_plugin_libraries before
 * 15.19) reads as NULL and is not checked.  A fix appends flusso to a list
 * setting, keeping what is there, item by item so that ALTER SYSTEM quotes
 * each library separately.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "replication/slot.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/varlena.h"

#include "check/environment.h"
#include "compat.h"
#include "settings.h"
#include "source/source.h"
#include "util/pinned.h"
#include "util/spi_run.h"

/* launcher, one worker, one short-lived probe */
#define MIN_WORKER_PROCESSES 3

/* Does a library list name flusso ("flusso", "$libdir/flusso", "flusso.so")? */
static bool
list_has_flusso(const char *value, List **items)
{
	char	   *raw = pstrdup(value ? value : "");
	ListCell   *lc;
	bool		found = false;

	*items = NIL;
	if (!SplitGUCList(raw, ',', items))
		return false;
	foreach(lc, *items)
	{
		const char *item = lfirst(lc);
		const char *base = strrchr(item, '/');

		base = base ? base + 1 : item;
		if (strcmp(base, "flusso") == 0 || strcmp(base, "flusso.so") == 0)
			found = true;
	}
	return found;
}

/* ALTER SYSTEM SET name = 'a', 'b', 'flusso' */
static char *
append_flusso_sql(const char *name, List *items)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	appendStringInfo(&buf, "ALTER SYSTEM SET %s = ", name);
	foreach(lc, items)
		appendStringInfo(&buf, "%s, ", quote_literal_cstr(lfirst(lc)));
	appendStringInfoString(&buf, "'flusso'");
	return buf.data;
}

static void
add_library_fix(List **fixes, const char *name, bool needs_restart)
{
	const char *value = GetConfigOption(name, true, false);
	List	   *items;
	SettingFix *fix;

	if (value == NULL || list_has_flusso(value, &items))
		return;
	fix = palloc0(sizeof(SettingFix));
	fix->name = name;
	fix->problem = psprintf("flusso is not in %s", name);
	fix->sql = append_flusso_sql(name, items);
	fix->needs_restart = needs_restart;
	*fixes = lappend(*fixes, fix);
}

/* The server settings that must change before flusso can run. */
List *
environment_setting_fixes(void)
{
	List	   *fixes = NIL;
	const char *wal_level = GetConfigOption("wal_level", true, false);

	if (wal_level == NULL || strcmp(wal_level, "logical") != 0)
	{
		SettingFix *fix = palloc0(sizeof(SettingFix));

		fix->name = "wal_level";
		fix->problem = psprintf("wal_level is \"%s\", and flusso needs \"logical\"",
								wal_level ? wal_level : "");
		fix->sql = pstrdup("ALTER SYSTEM SET wal_level = logical");
		fix->needs_restart = true;
		fixes = lappend(fixes, fix);
	}
	add_library_fix(&fixes, "shared_preload_libraries", true);
	add_library_fix(&fixes, "output_plugin_libraries", false);
	return fixes;
}

char *
environment_slot_name(void)
{
	return psprintf(FLUSSO_SLOT_FORMAT, MyDatabaseId);
}

/* Does this database's slot exist, and with which output plugin? */
bool
environment_slot_exists(char **plugin)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(environment_slot_name())};
	List	   *plugins;

	plugins = spi_read_texts("SELECT plugin::pg_catalog.text FROM pg_catalog.pg_replication_slots "
							 "WHERE slot_name OPERATOR(pg_catalog.=) $1", 1, argtypes, values);
	if (plugins == NIL)
		return false;
	*plugin = linitial(plugins) ? (char *) linitial(plugins) : "";
	return true;
}

/* A count from a query with at most one oid parameter, $1. */
static int64
count_of(const char *sql, Oid param)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(param)};

	return spi_read_int64(sql, OidIsValid(param) ? 1 : 0, argtypes, values);
}

static void
check_capacity(DiagnosticSink *sink, bool slot_exists)
{
	int			max_slots = atoi(GetConfigOption("max_replication_slots", false, false));
	int			max_workers = atoi(GetConfigOption("max_worker_processes", false, false));
	int64		slots_used = count_of("SELECT pg_catalog.count(*) FROM pg_catalog.pg_replication_slots", InvalidOid);

	if (max_slots == 0)
		diag_add(sink, SEVERITY_ERROR, "max_replication_slots",
				 "ALTER SYSTEM SET max_replication_slots = 10; then restart the server.",
				 "max_replication_slots is 0, and flusso needs one slot per database");
	else if (!slot_exists && slots_used >= max_slots)
		diag_add(sink, SEVERITY_ERROR, "max_replication_slots",
				 psprintf("ALTER SYSTEM SET max_replication_slots = %d; then restart the server.",
						  max_slots + 1),
				 "all %d replication slots are in use, and flusso needs one for this database",
				 max_slots);
	if (max_workers < MIN_WORKER_PROCESSES)
		diag_add(sink, SEVERITY_ERROR, "max_worker_processes",
				 psprintf("ALTER SYSTEM SET max_worker_processes = %d; then restart the server.",
						  MIN_WORKER_PROCESSES + 5),
				 "max_worker_processes is %d, and flusso needs at least %d: a launcher, a worker per database and a probe",
				 max_workers, MIN_WORKER_PROCESSES);
}

static void
check_publication(DiagnosticSink *sink, const PublicationState *pub)
{
	if (!pub->exists)
		diag_add(sink, SEVERITY_ERROR, "publication",
				 "SELECT * FROM flusso_provision(); creates it.",
				 "publication \"%s\" does not exist", pub->name);
	else if (pub->missing_actions)
		diag_add(sink, SEVERITY_ERROR, "publication",
				 psprintf("ALTER PUBLICATION %s SET (publish = 'insert, update, delete, truncate');",
						  quote_identifier(pub->name)),
				 "publication \"%s\" does not publish %s, so those changes would be missed",
				 pub->name, pub->missing_actions);
}

/*
 * The worker applies a failover slot's changes only once every slot named
 * in synchronized_standby_slots has them (cdc/decode.c), so one that does
 * not exist here holds every change back: after a promotion, typically,
 * when the old primary's setting came along with its configuration.
 */
static void
check_standby_slots(DiagnosticSink *sink, const char *standbys)
{
	char	   *raw = pstrdup(standbys);
	List	   *names;
	ListCell   *lc;

	if (!SplitIdentifierString(raw, ',', &names))
		return;
	foreach(lc, names)
	{
		const char *name = lfirst(lc);
		bool		found;

		LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
		found = SearchNamedReplicationSlot(name, false) != NULL;
		LWLockRelease(ReplicationSlotControlLock);
		if (!found)
			diag_add(sink, SEVERITY_ERROR, "synchronized_standby_slots",
					 "Create the standby's slot, or remove it from synchronized_standby_slots and SELECT pg_reload_conf().",
					 "synchronized_standby_slots names replication slot \"%s\", which does not exist, so the worker applies no change",
					 name);
	}
}

/*
 * On 17 and later a promoted standby goes on from its copy of a failover
 * slot.  Say when the slot is not one, and when no standby is named in
 * synchronized_standby_slots: nothing then tells that a standby syncs it,
 * and the worker may apply changes a promoted standby never received.
 */
static void
check_failover(DiagnosticSink *sink, const char *slot_name)
{
	const char *standbys = GetConfigOption("synchronized_standby_slots", true, false);
	ReplicationSlot *slot;
	bool		failover = false;

	if (!COMPAT_HAS_FAILOVER_SLOTS)
		return;
	LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
	slot = SearchNamedReplicationSlot(slot_name, false);
	if (slot)
	{
		SpinLockAcquire(&slot->mutex);
		failover = compat_slot_is_failover(slot);
		SpinLockRelease(&slot->mutex);
	}
	LWLockRelease(ReplicationSlotControlLock);
	if (slot == NULL)
		return;

	if (!failover)
		diag_add(sink, SEVERITY_WARNING, "slot",
				 "Set flusso.failover_slot = on (the default): a slot takes it when the worker creates it, so the next slot will be one.",
				 "replication slot \"%s\" is not a failover slot, so a promoted standby would have no copy of it and seed every index again",
				 slot_name);
	else if (standbys == NULL || standbys[0] == '\0')
		diag_add(sink, SEVERITY_INFO, "slot",
				 "On a standby: sync_replication_slots = on, hot_standby_feedback = on, primary_slot_name and a dbname in primary_conninfo; here: synchronized_standby_slots naming its slot.",
				 "no standby is named in synchronized_standby_slots, so none is known to sync replication slot \"%s\"",
				 slot_name);
	else
		check_standby_slots(sink, standbys);
}

/*
 * Is this database a copy of another one (source/source.c)?  Said once the
 * worker has taken it in, and warned about until then: OpenSearch is not
 * written to meanwhile.
 */
static void
check_source(DiagnosticSink *sink)
{
	SourceIdentity identity;
	CatalogUser saved;
	bool		known;

	catalog_become_owner(&saved);
	known = source_look(&identity);
	catalog_restore_user(&saved);
	if (!known)
		return;
	if (identity.unclaimed)
		diag_add(sink, SEVERITY_WARNING, "source",
				 "The flusso worker gives it an identity of its own when it starts; flusso_status() says when it has.",
				 "this database is a copy of %s, and its flusso has no identity of its own yet: nothing is shipped to OpenSearch until it has",
				 identity.unclaimed);
	else if (identity.copied_from)
		diag_add(sink, SEVERITY_INFO, "source",
				 "To serve an alias the other database serves, give the server an index_prefix of its own, or call flusso_adopt(index) if this database is to take over.",
				 "this database is a copy of %s: its OpenSearch indexes are its own, and it takes no alias that database serves",
				 identity.copied_from);
}

/* The environment rows of flusso_check(). */
void
check_environment(DiagnosticSink *sink, const PublicationState *pub)
{
	ListCell   *lc;
	char	   *plugin = NULL;
	bool		slot_exists = environment_slot_exists(&plugin);
	char	   *slot = environment_slot_name();

	foreach(lc, environment_setting_fixes())
	{
		SettingFix *fix = lfirst(lc);

		diag_add(sink, SEVERITY_ERROR, fix->name,
				 psprintf("%s; then %s.", fix->sql,
						  fix->needs_restart ? "restart the server" : "SELECT pg_reload_conf()"),
				 "%s", fix->problem);
	}
	check_capacity(sink, slot_exists);
	check_publication(sink, pub);

	if (!slot_exists)
		diag_add(sink, SEVERITY_WARNING, "slot",
				 "The flusso worker creates it when it starts; check again in a moment.",
				 "replication slot \"%s\" does not exist yet", slot);
	else if (strcmp(plugin, "flusso") != 0)
		diag_add(sink, SEVERITY_WARNING, "slot",
				 psprintf("SELECT pg_drop_replication_slot('%s'); the worker then creates it again.", slot),
				 "replication slot \"%s\" uses output plugin \"%s\", not flusso", slot, plugin);
	else
		check_failover(sink, slot);

	if (count_of("SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_activity "
				 "WHERE backend_type OPERATOR(pg_catalog.=) 'flusso worker' AND datid OPERATOR(pg_catalog.=) $1",
				 MyDatabaseId) == 0)
		diag_add(sink, SEVERITY_WARNING, "worker",
				 "The launcher starts it within seconds of an index being defined; if it does not, see the server log.",
				 "no flusso worker is running for database \"%s\"",
				 get_database_name(MyDatabaseId));
	check_source(sink);
}

/*-------------------------------------------------------------------------
 *
 * pinned.c
 *	  The settings flusso pins wherever it runs SQL on someone else's
 *	  behalf or renders values, and running as another role under them.
 *
 * Statements flusso runs with elevated rights (as the catalog's owner) or
 * as another role (an index's owner) must not be steered by the caller's
 * or the database's search_path: an operator, function or cast found
 * first in a schema the caller controls would run with those rights
 * (CVE-2018-1058).  So search_path is pinned to pg_catalog, with pg_temp
 * last, and the generated SQL qualifies what it calls as well.
 *
 * Values cross process boundaries as text: key values rendered by the
 * output plugin are parsed by the worker, documents are built by the
 * worker and by flusso_build() alike.  The settings that change how a
 * value is rendered or parsed are pinned too, so that the same row gives
 * the same key and the same document whatever the database's, the role's
 * or the session's defaults: TimeZone, DateStyle, IntervalStyle,
 * extra_float_digits (shortest exact floats), bytea_output, lc_monetary
 * (money) and standard_conforming_strings (how a raw filter's literals
 * read).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/syscache.h"

#include "util/pinned.h"
#include "settings.h"

static const char *const pinned[][2] = {
	{"search_path", "pg_catalog, pg_temp"},
	{"TimeZone", "UTC"},
	{"DateStyle", "ISO, YMD"},
	{"IntervalStyle", "postgres"},
	{"extra_float_digits", "1"},
	{"bytea_output", "hex"},
	{"lc_monetary", "C"},
	{"standard_conforming_strings", "on"},
};

/*
 * Pin the settings for the rest of the process, above anything a database
 * or role default could set: for the worker, whose every statement runs on
 * someone else's behalf and whose output plugin renders key values.
 */
void
pinned_settings_for_process(void)
{
	for (int i = 0; i < lengthof(pinned); i++)
		SetConfigOption(pinned[i][0], pinned[i][1], PGC_SUSET, PGC_S_OVERRIDE);
}

/*
 * Run as role, under the pinned settings, until role_switch_end().  A
 * restricted switch is a security-restricted operation as well (no
 * session state may change), for running code its owner controls.  On
 * error, the transaction's end reverts both.
 */
void
role_switch_begin(RoleSwitch *saved, Oid role, bool restricted)
{
	saved->guc_nest_level = NewGUCNestLevel();
	for (int i = 0; i < lengthof(pinned); i++)
		(void) set_config_option(pinned[i][0], pinned[i][1], PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	GetUserIdAndSecContext(&saved->saved_userid, &saved->saved_sec_context);
	SetUserIdAndSecContext(role, saved->saved_sec_context | SECURITY_LOCAL_USERID_CHANGE |
						   (restricted ? SECURITY_RESTRICTED_OPERATION : 0));
}

void
role_switch_end(RoleSwitch *saved)
{
	SetUserIdAndSecContext(saved->saved_userid, saved->saved_sec_context);
	AtEOXact_GUC(true, saved->guc_nest_level);
}

/*
 * Run as the owner of schema flusso (the role that ran CREATE EXTENSION)
 * until catalog_restore_user, to write flusso's own tables and schemas,
 * under the pinned settings: the caller's search_path must not choose
 * what runs with those rights.
 */
void
catalog_become_owner(CatalogUser *saved)
{
	Oid			nsp = get_namespace_oid(FLUSSO_SCHEMA, false);
	HeapTuple	tuple;
	Oid			owner;

	tuple = SearchSysCache1(NAMESPACEOID, ObjectIdGetDatum(nsp));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for namespace %u", nsp);
	owner = ((Form_pg_namespace) GETSTRUCT(tuple))->nspowner;
	ReleaseSysCache(tuple);
	role_switch_begin(saved, owner, false);
}

void
catalog_restore_user(CatalogUser *saved)
{
	role_switch_end(saved);
}

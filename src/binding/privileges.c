/*-------------------------------------------------------------------------
 *
 * privileges.c
 *	  An index is built with its owner's rights, so its owner must be able
 *	  to read every column it reads: USAGE on the table's schema, and
 *	  SELECT on the table or on each of those columns.
 *
 * flusso_check() reports what is missing; the worker asks before it
 * compiles an index and again before it resolves any of the index's
 * changes, so that values from the WAL of a table the owner may not read
 * are never used (and so never echoed in an error), and an index whose
 * owner lost a privilege stops alone.  The messages name roles, tables
 * and columns, never values.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "binding/privileges.h"
#include "compat.h"

/* NULL when the owner role exists; its absence, in words, otherwise. */
char *
owner_problem(Oid owner)
{
	if (SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(owner)))
		return NULL;
	return psprintf("the owner of the index (role %u) no longer exists", owner);
}

/* NULL when owner may read what the index reads of table. */
char *
table_privilege_problem(const TableUse *table, Oid owner)
{
	char	   *role = GetUserNameFromId(owner, false);
	Oid			nsp = get_rel_namespace(table->relid);
	ListCell   *lc;

	if (compat_namespace_aclcheck(nsp, owner, ACL_USAGE) != ACLCHECK_OK)
		return psprintf("role \"%s\" lacks USAGE on schema \"%s\"", role, table->nspname);
	if (pg_class_aclcheck(table->relid, owner, ACL_SELECT) == ACLCHECK_OK)
		return NULL;
	foreach(lc, table->columns)
	{
		AttrNumber	attnum = get_attnum(table->relid, lfirst(lc));

		if (attnum == InvalidAttrNumber ||
			pg_attribute_aclcheck(table->relid, attnum, owner, ACL_SELECT) != ACLCHECK_OK)
			return psprintf("role \"%s\" lacks SELECT on column \"%s\" of table \"%s\"",
							role, (char *) lfirst(lc), table->display);
	}
	if (table->columns == NIL)
		return psprintf("role \"%s\" lacks SELECT on table \"%s\"", role, table->display);
	return NULL;
}

/* The first thing owner may not read of tables (TableUse), or NULL. */
char *
privilege_problem(List *tables, Oid owner)
{
	char	   *problem = owner_problem(owner);
	ListCell   *lc;

	foreach(lc, tables)
	{
		if (problem)
			break;
		problem = table_privilege_problem(lfirst(lc), owner);
	}
	return problem;
}

/*-------------------------------------------------------------------------
 *
 * access.c
 *	  Permission checks for flusso's SQL functions: who may manage indexes,
 *	  who owns one, and who may read its documents.
 *
 * Users never write flusso.index directly: the functions validate a
 * definition and then store it as the owner of schema flusso (the role that
 * ran CREATE EXTENSION, util/pinned.c), so flusso_admin needs no rights
 * on the table and a stored definition has always been validated.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "util/access.h"

/* Is the current user a superuser or a member of flusso_admin? */
bool
flusso_is_admin(void)
{
	Oid			admin = get_role_oid(FLUSSO_ADMIN_ROLE, true);

	if (superuser())
		return true;
	return OidIsValid(admin) && has_privs_of_role(GetUserId(), admin);
}

/*
 * May the current user read flusso's status?  flusso_admin members may,
 * and members of pg_monitor, the role metrics are scraped as: these see
 * figures and phases, not error texts (see flusso_status()).
 */
bool
flusso_is_monitor(void)
{
	return has_privs_of_role(GetUserId(), ROLE_PG_MONITOR);
}

/* Only superusers and members of flusso_admin may manage indexes. */
void
flusso_require_admin(void)
{
	if (flusso_is_admin())
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to manage flusso indexes"),
			 errdetail("Only superusers and members of role \"%s\" may manage flusso indexes.",
					   FLUSSO_ADMIN_ROLE),
			 errhint("A superuser can run: GRANT %s TO %s;",
					 FLUSSO_ADMIN_ROLE,
					 quote_identifier(GetUserNameFromId(GetUserId(), false)))));
}

/* Replacing or dropping an index takes the rights of its owner. */
void
flusso_require_owner(Oid owner, const char *index_name)
{
	if (has_privs_of_role(GetUserId(), owner))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("must be owner of index \"%s\"", index_name),
			 errdetail("Index \"%s\" is owned by role \"%s\".",
					   index_name, GetUserNameFromId(owner, false))));
}

/*
 * Reading an index's documents, or building them (flusso_build,
 * flusso_verify), takes the rights of its owner, or SELECT on its
 * documents table, which its owner grants: documents hold what the index
 * reads with its owner's rights.
 */
void
flusso_require_reader(Oid owner, const char *index_name)
{
	Oid			docs = get_relname_relid(index_name,
										 get_namespace_oid(FLUSSO_DOCS_SCHEMA, false));

	if (has_privs_of_role(GetUserId(), owner))
		return;
	if (OidIsValid(docs) && pg_class_aclcheck(docs, GetUserId(), ACL_SELECT) == ACLCHECK_OK)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to read the documents of index \"%s\"", index_name),
			 errdetail("Index \"%s\" is built with the rights of role \"%s\".",
					   index_name, GetUserNameFromId(owner, false)),
			 errhint("Its owner can run: GRANT SELECT ON %s TO %s;",
					 quote_qualified_identifier(FLUSSO_DOCS_SCHEMA, index_name),
					 quote_identifier(GetUserNameFromId(GetUserId(), false)))));
}

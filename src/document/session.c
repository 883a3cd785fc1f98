/*-------------------------------------------------------------------------
 *
 * session.c
 *	  Entering and leaving the conditions documents are built under.
 *
 * The worker runs privileged; a definition can hold raw SQL filters.  So a
 * document is built as the index's owner, in a security-restricted
 * operation, with search_path pinned to pg_catalog, pg_temp (every name in
 * generated SQL is qualified anyway).  TimeZone, DateStyle,
 * extra_float_digits and bytea_output are pinned too, so that the same
 * rows build the same JSON whoever builds them: the worker, flusso_build()
 * and flusso_verify() alike.  The settings are reverted on leaving (and by
 * the transaction's end on error).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/guc.h"

#include "document/session.h"

static const char *const pinned[][2] = {
	{"search_path", "pg_catalog, pg_temp"},
	{"TimeZone", "UTC"},
	{"DateStyle", "ISO, YMD"},
	{"IntervalStyle", "postgres"},
	{"extra_float_digits", "1"},
	{"bytea_output", "hex"},
};

void
doc_session_begin(BuildSession *session, Oid owner)
{
	session->guc_nest_level = NewGUCNestLevel();
	for (int i = 0; i < lengthof(pinned); i++)
		(void) set_config_option(pinned[i][0], pinned[i][1], PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	GetUserIdAndSecContext(&session->saved_userid, &session->saved_sec_context);
	SetUserIdAndSecContext(owner, session->saved_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
}

void
doc_session_end(BuildSession *session)
{
	SetUserIdAndSecContext(session->saved_userid, session->saved_sec_context);
	AtEOXact_GUC(true, session->guc_nest_level);
}

/*-------------------------------------------------------------------------
 *
 * session.c
 *	  Entering and leaving the conditions documents are built under.
 *
 * The worker runs privileged; a definition can hold raw SQL filters.  So a
 * document is built as the index's owner, in a security-restricted
 * operation, under the settings util/pinned.c pins: search_path is
 * pg_catalog, pg_temp (every name in generated SQL is qualified anyway),
 * and TimeZone, DateStyle, extra_float_digits, bytea_output and the others
 * are fixed, so that the same rows build the same JSON whoever builds
 * them: the worker, flusso_build() and flusso_verify() alike.  The
 * settings are reverted on leaving (and by the transaction's end on
 * error).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "document/session.h"

void
doc_session_begin(BuildSession *session, Oid owner)
{
	role_switch_begin(session, owner, true);
}

void
doc_session_end(BuildSession *session)
{
	role_switch_end(session);
}

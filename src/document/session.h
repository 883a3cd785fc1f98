/*-------------------------------------------------------------------------
 *
 * session.h
 *	  The conditions every document is built under: as the index's owner,
 *	  in a restricted security context, with search_path and the settings
 *	  that change JSON output pinned.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_DOCUMENT_SESSION_H
#define FLUSSO_DOCUMENT_SESSION_H

#include "util/pinned.h"

typedef RoleSwitch BuildSession;

extern void doc_session_begin(BuildSession *session, Oid owner);
extern void doc_session_end(BuildSession *session);

#endif							/* FLUSSO_DOCUMENT_SESSION_H */

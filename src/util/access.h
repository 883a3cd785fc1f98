/*-------------------------------------------------------------------------
 *
 * access.h
 *	  Who may call flusso's SQL functions.  (The catalog owner's rights,
 *	  which the functions write flusso's tables with, are util/pinned.h's,
 *	  included here for them.)
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_UTIL_ACCESS_H
#define FLUSSO_UTIL_ACCESS_H

#include "util/pinned.h"
#include "settings.h"

#define FLUSSO_ADMIN_ROLE "flusso_admin"

extern bool flusso_is_admin(void);
extern bool flusso_is_monitor(void);
extern void flusso_require_admin(void);
extern void flusso_require_owner(Oid owner, const char *index_name);
extern void flusso_require_reader(Oid owner, const char *index_name);

#endif							/* FLUSSO_UTIL_ACCESS_H */

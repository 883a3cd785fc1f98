/*-------------------------------------------------------------------------
 *
 * pinned.h
 *	  The settings flusso pins wherever it runs SQL on someone else's
 *	  behalf or renders values, and running as another role under them.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_UTIL_PINNED_H
#define FLUSSO_UTIL_PINNED_H

/* Where a role switch returns to. */
typedef struct RoleSwitch
{
	Oid			saved_userid;
	int			saved_sec_context;
	int			guc_nest_level;
} RoleSwitch;

/* the catalog owner's rights, under the pinned settings */
typedef RoleSwitch CatalogUser;

extern void pinned_settings_for_process(void);
extern void role_switch_begin(RoleSwitch *saved, Oid role, bool restricted);
extern void role_switch_end(RoleSwitch *saved);
extern void catalog_become_owner(CatalogUser *saved);
extern void catalog_restore_user(CatalogUser *saved);

#endif							/* FLUSSO_UTIL_PINNED_H */

/*-------------------------------------------------------------------------
 *
 * environment.h
 *	  Server settings and runtime state flusso depends on, beyond any one
 *	  index: wal_level, library lists, slot and worker capacity, the slot
 *	  and the worker of this database, and the publication itself.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_CHECK_ENVIRONMENT_H
#define FLUSSO_CHECK_ENVIRONMENT_H

#include "binding/diagnostic.h"
#include "binding/publication.h"

/* A server setting that must change, and how. */
typedef struct SettingFix
{
	const char *name;
	char	   *problem;		/* what is wrong now */
	char	   *sql;			/* the ALTER SYSTEM statement */
	bool		needs_restart;	/* else a reload suffices */
} SettingFix;

extern List *environment_setting_fixes(void);
extern char *environment_slot_name(void);
extern bool environment_slot_exists(char **plugin);
extern void check_environment(DiagnosticSink *sink, const PublicationState *pub);

#endif							/* FLUSSO_CHECK_ENVIRONMENT_H */

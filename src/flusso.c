/*-------------------------------------------------------------------------
 *
 * flusso.c
 *	  Entry point of the flusso library: module magic and _PG_init.
 *
 * Loaded through shared_preload_libraries, _PG_init defines the flusso.*
 * settings (settings.c), requests shared memory and registers the
 * launcher.  Every
 * backend also installs the drop hook that lets DROP EXTENSION and DROP
 * DATABASE stop the worker.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

#include "ipc/shared.h"
#include "settings.h"
#include "worker/worker.h"

PG_MODULE_MAGIC;

extern PGDLLEXPORT void _PG_init(void);

void
_PG_init(void)
{
	settings_define();
	worker_install_hooks();
	if (!process_shared_preload_libraries_in_progress)
		return;
	shared_install_hooks();
	status_install_hooks();
	launcher_register();
}

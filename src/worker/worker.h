/*-------------------------------------------------------------------------
 *
 * worker.h
 *	  Background worker entry points: the launcher, the per-database worker
 *	  and the short-lived probe; and what SQL functions tell them.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_WORKER_WORKER_H
#define FLUSSO_WORKER_WORKER_H

#include "fmgr.h"

extern PGDLLEXPORT void flusso_launcher_main(Datum arg);
extern PGDLLEXPORT void flusso_worker_main(Datum arg);
extern PGDLLEXPORT void flusso_probe_main(Datum arg);

extern void launcher_register(void);

/* requests to the launcher and the worker, carried out at commit */
extern void worker_request_at_commit(bool wanted);
extern void worker_install_drop_hooks(void);

/* in the worker: lock the extension against DROP EXTENSION, or exit */
extern void worker_lock_extension(void);

#endif							/* FLUSSO_WORKER_WORKER_H */

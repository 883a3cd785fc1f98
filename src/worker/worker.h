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

extern void worker_install_hooks(void);

#endif							/* FLUSSO_WORKER_WORKER_H */

/*-------------------------------------------------------------------------
 *
 * capture_log.h
 *	  A diagnostic sink that records every applied change in
 *	  flusso.capture_log, when flusso.capture_log is on.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_WORKER_CAPTURE_LOG_H
#define FLUSSO_WORKER_CAPTURE_LOG_H

#include "cdc/thin_change.h"

extern void capture_log_write(const ThinChange *change);

#endif							/* FLUSSO_WORKER_CAPTURE_LOG_H */

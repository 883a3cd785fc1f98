/*-------------------------------------------------------------------------
 *
 * signal_read.h
 *	  The signals a batch of the stream carries, read from its notes.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SIGNAL_SIGNAL_READ_H
#define FLUSSO_SIGNAL_SIGNAL_READ_H

#include "cdc/batch.h"
#include "engine/engine.h"
#include "signal/signal.h"

extern List *signal_read(Engine *engine, const ChangeBatch *batch);

#endif							/* FLUSSO_SIGNAL_SIGNAL_READ_H */

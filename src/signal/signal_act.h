/*-------------------------------------------------------------------------
 *
 * signal_act.h
 *	  The worker's side of signals: acting on those a batch ended with.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SIGNAL_SIGNAL_ACT_H
#define FLUSSO_SIGNAL_SIGNAL_ACT_H

#include "engine/engine.h"
#include "signal/signal.h"

/* What acting on a batch's signals leaves to the caller. */
typedef struct SignalOutcome
{
	List	   *reseeded;		/* EngineIndex marked for seeding afresh */
	List	   *watermarks;		/* Signal: a seed's, for the seed to take */
	bool		recompile;		/* a table was rewritten or altered */
} SignalOutcome;

extern void signal_act(Engine *engine, List *signals, SignalOutcome *outcome);

#endif							/* FLUSSO_SIGNAL_SIGNAL_ACT_H */

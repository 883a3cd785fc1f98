/*-------------------------------------------------------------------------
 *
 * pace.h
 *	  How many keys to build at once so that it takes about a given time,
 *	  from what building one cost lately.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_UTIL_PACE_H
#define FLUSSO_UTIL_PACE_H

#include "datatype/timestamp.h"

/* What building documents of one index costs lately. */
typedef struct BuildPace
{
	double		ms_each;		/* milliseconds a key, 0: not known yet */
	int			last_keys;		/* keys of the last build */
} BuildPace;

extern void pace_note(BuildPace *pace, int keys, TimestampTz began);
extern int	pace_keys(const BuildPace *pace, long budget_ms, int limit);

#endif							/* FLUSSO_UTIL_PACE_H */

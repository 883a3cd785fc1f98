/*-------------------------------------------------------------------------
 *
 * pace.c
 *	  How many keys to build at once so that it takes about a given time:
 *	  the worker's slices and seed chunks (engine/owed.c) and the shipper's
 *	  bulks (shipper/ship.c) are sized so, so that an index whose documents
 *	  are dear takes turns as short as the others', and never keeps them
 *	  waiting behind one long statement.
 *
 * The cost of a key is measured on each build, the latest weighing most.
 * A first build is of one key: its cost unknown, one is all a turn can be
 * sure to afford.  From one build to the next the count grows at most
 * PACE_GROWTH-fold, as a few cheap keys may hide dear ones.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "util/pace.h"

#define PACE_GROWTH 64

/* Building keys took from began until now. */
void
pace_note(BuildPace *pace, int keys, TimestampTz began)
{
	double		ms;

	if (keys <= 0)
		return;
	ms = (double) (GetCurrentTimestamp() - began) / 1000.0 / keys;
	pace->ms_each = pace->ms_each <= 0 ? ms : (pace->ms_each + 3 * ms) / 4;
	pace->last_keys = keys;
}

/* How many keys build in about budget_ms, at most limit, at least one. */
int
pace_keys(const BuildPace *pace, long budget_ms, int limit)
{
	double		keys;

	if (pace->ms_each <= 0 || pace->last_keys <= 0)
		return 1;
	keys = Max(budget_ms, 1) / Max(pace->ms_each, 0.001);
	keys = Min(keys, (double) pace->last_keys * PACE_GROWTH);
	return (int) Max(1.0, Min(keys, (double) limit));
}

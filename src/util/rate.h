/*-------------------------------------------------------------------------
 *
 * rate.h
 *	  How fast a counter grew recently: a short ring of (time, value)
 *	  samples in shared memory, from which flusso_status() estimates the
 *	  time left to catch up.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_UTIL_RATE_H
#define FLUSSO_UTIL_RATE_H

#include "datatype/timestamp.h"

/* eight samples at least eight seconds apart: about the last minute */
#define RATE_SAMPLES			8
#define RATE_SAMPLE_INTERVAL	(8 * USECS_PER_SEC)
/* a rate is measured over one second at least */
#define RATE_MIN_SPAN			USECS_PER_SEC

typedef struct RateSample
{
	TimestampTz at;
	uint64		value;
} RateSample;

typedef struct RateWindow
{
	int			nsamples;
	int			newest;			/* slot of the newest sample */
	RateSample	samples[RATE_SAMPLES];
} RateWindow;

extern void rate_restart(RateWindow *window, TimestampTz now, uint64 value);
extern void rate_note(RateWindow *window, TimestampTz now, uint64 value);
extern double rate_per_second(const RateWindow *window, TimestampTz now, uint64 value);

#endif							/* FLUSSO_UTIL_RATE_H */

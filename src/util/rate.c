/*-------------------------------------------------------------------------
 *
 * rate.c
 *	  A counter's recent rate of growth, from a ring of samples that its
 *	  writer notes where it updates the counter (under the lock that
 *	  guards both), and that a reader compares with the counter's value
 *	  now.
 *
 * Why a ring and not an exponential average: a worker that falls behind
 * after a quiet hour must not carry the quiet hour in its rate, and one
 * that was just restarted has no history at all.  The writer restarts
 * the window when the work it measures begins (a worker catching up, a
 * seed starting), and notes a sample at most every RATE_SAMPLE_INTERVAL,
 * so the oldest sample is at most about a minute old and the rate is the
 * average since then: what a window of the last minute says, without
 * any clock of its own.  A window younger than RATE_MIN_SPAN gives no
 * rate: one batch is not a trend.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "util/rate.h"

/* The window begins now, at value. */
void
rate_restart(RateWindow *window, TimestampTz now, uint64 value)
{
	window->nsamples = 1;
	window->newest = 0;
	window->samples[0].at = now;
	window->samples[0].value = value;
}

/*
 * The counter is at value now: a sample, unless the newest is recent.  A
 * counter that went back (its writer restarted) or a window left alone
 * for longer than it spans begins again.
 */
void
rate_note(RateWindow *window, TimestampTz now, uint64 value)
{
	RateSample *newest = &window->samples[window->newest];

	if (window->nsamples == 0 || value < newest->value ||
		now - newest->at > RATE_SAMPLES * RATE_SAMPLE_INTERVAL)
	{
		rate_restart(window, now, value);
		return;
	}
	if (now - newest->at < RATE_SAMPLE_INTERVAL)
		return;
	window->newest = (window->newest + 1) % RATE_SAMPLES;
	window->samples[window->newest].at = now;
	window->samples[window->newest].value = value;
	if (window->nsamples < RATE_SAMPLES)
		window->nsamples++;
}

/*
 * Growth per second from the oldest sample to value now; -1 when unknown
 * (no sample, a window shorter than RATE_MIN_SPAN, or a counter that went
 * back), 0 when nothing was noted for longer than the window spans: the
 * counter stalled, and an average over a longer past is not recent.
 */
double
rate_per_second(const RateWindow *window, TimestampTz now, uint64 value)
{
	const RateSample *oldest;

	if (window->nsamples == 0)
		return -1;
	if (now - window->samples[window->newest].at > RATE_SAMPLES * RATE_SAMPLE_INTERVAL)
		return 0;
	oldest = &window->samples[(window->newest + RATE_SAMPLES - window->nsamples + 1) % RATE_SAMPLES];
	if (now - oldest->at < RATE_MIN_SPAN || value < oldest->value)
		return -1;
	return (double) (value - oldest->value) * USECS_PER_SEC / (double) (now - oldest->at);
}

/*-------------------------------------------------------------------------
 *
 * strikes.h
 *	  Which index the worker was working on when it died, remembered
 *	  across crashes, so that an index that keeps killing the worker is set
 *	  aside instead of restarting the cluster forever.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_IPC_STRIKES_H
#define FLUSSO_IPC_STRIKES_H

/* deaths while working on one index before it is set aside */
#define STRIKES_LIMIT 3

/* Why an index is set aside, when not for the worker's deaths */
typedef enum StrikeAside
{
	STRIKE_NOT_ASIDE = 0,
	STRIKE_TIMED_OUT = 1,		/* a build outlasted flusso.build_timeout */
	STRIKE_OVERRAN = 2			/* and would not end when canceled */
} StrikeAside;

extern void strikes_open(Oid dboid);
extern int	strikes_unattributed(void);
extern void strikes_begin(const char *index_name, const char *version);
extern void strikes_end(void);
extern void strikes_progressed(const char *index_name);
extern void strikes_record_error(void);
extern void strikes_healthy(void);
extern int	strikes_of(const char *index_name, const char *version);
extern void strikes_set_aside(const char *index_name, const char *version);
extern StrikeAside strikes_aside(const char *index_name, const char *version);
extern void strikes_forget(const char *index_name);

#endif							/* FLUSSO_IPC_STRIKES_H */

/*-------------------------------------------------------------------------
 *
 * attempt.h
 *	  Run something that may raise an error, in a subtransaction, and turn
 *	  the error into a message instead of aborting the caller.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_CHECK_ATTEMPT_H
#define FLUSSO_CHECK_ATTEMPT_H

extern bool attempt(void (*action) (void *arg), void *arg, char **failure);

#endif							/* FLUSSO_CHECK_ATTEMPT_H */

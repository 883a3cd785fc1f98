/*-------------------------------------------------------------------------
 *
 * attempt.h
 *	  Run something that may raise an error, in a subtransaction or outside
 *	  any transaction, and turn the error into a value instead of aborting
 *	  the caller.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_UTIL_ATTEMPT_H
#define FLUSSO_UTIL_ATTEMPT_H

#include "utils/elog.h"

extern bool attempt(void (*action) (void *arg), void *arg, char **failure);
extern bool attempt_error(void (*action) (void *arg), void *arg, ErrorData **error);
extern bool attempt_error_within(void (*action) (void *arg), void *arg, int timeout_ms,
								 ErrorData **error, bool *timed_out);
extern bool attempt_overran(void);
extern bool attempt_outside_transaction(void (*action) (void *arg), void *arg,
										ErrorData **error);
extern char *attempt_message_for_status(const ErrorData *error);

#endif							/* FLUSSO_UTIL_ATTEMPT_H */

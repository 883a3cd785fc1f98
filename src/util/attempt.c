/*-------------------------------------------------------------------------
 *
 * attempt.c
 *	  attempt(): run an action in an internal subtransaction; on error roll
 *	  it back and hand the error back.  flusso_check() tries filter values
 *	  and build statements with it, flusso_provision() each statement, and
 *	  the worker each index's work, so that one failure stops only what
 *	  failed; that work bounded in time, if asked (attempt_error_within).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

#include "util/attempt.h"

/*
 * Run action(arg) in a subtransaction.  On error, roll the subtransaction
 * back, copy the error into the caller's memory context and return false.
 */
bool
attempt_error(void (*action) (void *arg), void *arg, ErrorData **error)
{
	MemoryContext context = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	bool		ok = true;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(context);
	PG_TRY();
	{
		action(arg);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(context);
		*error = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		ok = false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(context);
	CurrentResourceOwner = owner;
	return ok;
}

/*
 * attempt_error(), stopped if it runs longer than timeout_ms (none when 0),
 * as statement_timeout stops a client's statement: the timer's cancel is
 * raised inside action, as an error.  *timed_out says whether that is why
 * it failed.  A cancel the timer sent as action ended is taken back, so
 * that it never reaches the caller.
 */
bool
attempt_error_within(void (*action) (void *arg), void *arg, int timeout_ms,
					 ErrorData **error, bool *timed_out)
{
	TimestampTz began = GetCurrentTimestamp();
	bool		ok;

	*timed_out = false;
	if (timeout_ms <= 0)
		return attempt_error(action, arg, error);
	enable_timeout_after(STATEMENT_TIMEOUT, timeout_ms);
	ok = attempt_error(action, arg, error);
	disable_timeout(STATEMENT_TIMEOUT, false);
	if (get_timeout_indicator(STATEMENT_TIMEOUT, true))
		QueryCancelPending = false;
	*timed_out = !ok && (*error)->sqlerrcode == ERRCODE_QUERY_CANCELED &&
		TimestampDifferenceExceeds(began, GetCurrentTimestamp(), timeout_ms);
	return ok;
}

/*
 * Run action outside any transaction (it may begin and end its own).  An
 * error it raises is logged, whatever transaction it left open is aborted
 * and its locks released, and the error comes back as *error, in the
 * caller's context, instead of ending the process: for a loop that goes on
 * with its other work, as the shipper does with its other indexes.
 */
bool
attempt_outside_transaction(void (*action) (void *arg), void *arg, ErrorData **error)
{
	MemoryContext context = CurrentMemoryContext;
	bool		ok = true;

	PG_TRY();
	{
		action(arg);
	}
	PG_CATCH();
	{
		HOLD_INTERRUPTS();
		MemoryContextSwitchTo(context);
		*error = CopyErrorData();
		EmitErrorReport();
		FlushErrorState();
		LWLockReleaseAll();
		AbortOutOfAnyTransaction();
		RESUME_INTERRUPTS();
		ok = false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(context);
	return ok;
}

/* The same as attempt_error, for callers that need only the error's message. */
bool
attempt(void (*action) (void *arg), void *arg, char **failure)
{
	ErrorData  *error;

	if (attempt_error(action, arg, &error))
		return true;
	*failure = error->message;
	return false;
}

/*
 * An error's message as flusso_status() may show it to every member of
 * flusso_admin.  Errors of the classes that name objects (syntax and
 * access rules, missing objects, limits, resources, integrity constraints
 * by name, internal errors) keep their message; others, such as a data
 * exception ("value \"7000000099\" is out of range for type smallint") or
 * an error raised by a user's function, may quote a row value the reader
 * may not see: they are reduced to their SQLSTATE, and the caller logs the
 * whole message, which only the server log shows.
 */
char *
attempt_message_for_status(const ErrorData *error)
{
	static const char *const shown_classes[] = {
		"08", "0A", "0B", "21", "23", "25", "40", "42", "53", "54", "55", "57", "58", "XX",
	};
	const char *sqlstate = unpack_sql_state(error->sqlerrcode);

	for (int i = 0; i < lengthof(shown_classes); i++)
	{
		if (strncmp(sqlstate, shown_classes[i], 2) == 0)
			return pstrdup(error->message);
	}
	return psprintf("an error with SQLSTATE %s (its message may quote row values and is in the server log only)",
					sqlstate);
}

/*-------------------------------------------------------------------------
 *
 * attempt.c
 *	  attempt(): run an action in an internal subtransaction; on error roll
 *	  it back and hand the error back.  flusso_check() tries filter values
 *	  and build statements with it, flusso_provision() each statement, and
 *	  the worker each index's work, so that one failure stops only what
 *	  failed; that work bounded in time, if asked (attempt_error_within),
 *	  even when the user's code it runs catches the cancel.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/latch.h"
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
 * A piece of work run by attempt_error_within() is canceled at its
 * deadline, as statement_timeout cancels a client's statement.  But the
 * work may run a user's code (a raw filter calling a function), which may
 * catch the cancel (EXCEPTION WHEN query_canceled) and go on.  So the
 * cancel is sent again every CANCEL_AGAIN_MS past the deadline, which
 * ends whatever catches it once and then calls anything; work that
 * returns past its deadline, having caught the cancel, has its
 * subtransaction rolled back all the same; and code that catches every
 * cancel in a loop is ended OVERRUN_GRACE_MS past the deadline by ending
 * the process (FATAL, as for a termination: no error can stop user code
 * that catches errors), which attempt_overran() then tells the process's
 * exit callbacks, so that the work is set aside rather than tried again.
 */
#define CANCEL_AGAIN_MS 100
#define OVERRUN_GRACE_MS 1000

static TimeoutId deadline_timeout = MAX_TIMEOUTS;	/* registered when first used */
static TimestampTz exit_at = 0;		/* read by the timeout handler */
static volatile sig_atomic_t overran = false;

/* The timeout's handler, in a signal handler: flags and a latch only. */
static void
cancel_past_deadline(void)
{
	int			save_errno = errno;

	InterruptPending = true;
	QueryCancelPending = true;
	if (GetCurrentTimestamp() >= exit_at)
	{
		overran = true;
		ProcDiePending = true;
	}
	SetLatch(MyLatch);
	errno = save_errno;
}

typedef struct DeadlineWork
{
	void		(*action) (void *arg);
	void	   *arg;
	TimestampTz deadline;
} DeadlineWork;

/* action, and an error if it returned past its deadline (a cancel caught) */
static void
run_before_deadline(void *arg)
{
	DeadlineWork *work = arg;

	work->action(work->arg);
	if (GetCurrentTimestamp() >= work->deadline)
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("canceling work that ran past its timeout")));
}

/*
 * attempt_error(), stopped if it runs longer than timeout_ms (none when 0):
 * the cancel is raised inside action, as an error, and raised again while
 * it goes on; past a second more, the process exits (see above).
 * *timed_out says whether it failed for its deadline.  A cancel sent as
 * action ended is taken back, so that it never reaches the caller.
 */
bool
attempt_error_within(void (*action) (void *arg), void *arg, int timeout_ms,
					 ErrorData **error, bool *timed_out)
{
	DeadlineWork work = {action, arg, 0};
	bool		ok;

	*timed_out = false;
	if (timeout_ms <= 0)
		return attempt_error(action, arg, error);
	if (deadline_timeout == MAX_TIMEOUTS)
		deadline_timeout = RegisterTimeout(USER_TIMEOUT, cancel_past_deadline);
	work.deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout_ms);
	exit_at = TimestampTzPlusMilliseconds(work.deadline, OVERRUN_GRACE_MS);
	enable_timeout_every(deadline_timeout, work.deadline, CANCEL_AGAIN_MS);
	ok = attempt_error(run_before_deadline, &work, error);
	disable_timeout(deadline_timeout, false);
	if (get_timeout_indicator(deadline_timeout, true))
		QueryCancelPending = false;
	*timed_out = !ok && (*error)->sqlerrcode == ERRCODE_QUERY_CANCELED &&
		GetCurrentTimestamp() >= work.deadline;
	return ok;
}

/*
 * Is the process exiting because work attempt_error_within() ran would
 * not end when canceled?  For exit callbacks, which set that work aside.
 */
bool
attempt_overran(void)
{
	return overran;
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

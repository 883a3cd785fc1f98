/*-------------------------------------------------------------------------
 *
 * attempt.c
 *	  attempt(): run an action in an internal subtransaction; on error roll
 *	  it back and return the error's message.  flusso_check() uses it to try
 *	  a filter value against its column's input function, and
 *	  flusso_provision() to run each statement, so that neither raises.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "check/attempt.h"

bool
attempt(void (*action) (void *arg), void *arg, char **failure)
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
		ErrorData  *edata;

		MemoryContextSwitchTo(context);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		*failure = edata->message;
		ok = false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(context);
	CurrentResourceOwner = owner;
	return ok;
}

/*-------------------------------------------------------------------------
 *
 * ship_wait.c
 *	  What the shipper tells flusso_wait() (api/wait.c) of an index: up
 *	  to which commit OpenSearch holds its changes in the served generation
 *	  (shipped_lsn), up to which _search sees them (refreshed_lsn), and
 *	  why shipping cannot get further now (ship_blocked).
 *
 * The worker publishes how far an index's changes are applied and queued
 * (applied_lsn), and when it did (applied_at), after the commits that
 * queued them.  So once no row the served generation takes, queued at or
 * before applied_at, is left in the outbox, OpenSearch has acknowledged
 * every change up to applied_lsn: a row leaves only once a bulk built
 * after it was last queued is acknowledged, and a row queued again keeps
 * the time it was first queued (catalog_outbox.c), so a document that
 * keeps changing still counts as waiting.  A row refused for good leaves
 * for flusso.rejected, which holds the index back instead, until
 * flusso_retry_rejected() queues it again.
 *
 * That look costs a query, so it is taken only while a session waits for
 * more than shipped_lsn says (ship_wanted_lsn), once per turn, and always
 * against the first position the worker published at or past what they
 * wait for (ShipRuntime's wait_lsn, wait_at): the rows queued by then are
 * shipped in a few turns, where a look against the latest one could be
 * put off for as long as the worker queues more.  A turn of bulks ends
 * early, after SHIP_WAITED_TURN_MS, while a session waits on its index
 * (ship_flight.c).  A refresh
 * is sent only while a session waits for _search to see a commit that has
 * been acknowledged and not yet refreshed (refresh_wanted_lsn): one
 * refresh of the served generation answers every session waiting then,
 * and no writer's bulk ever asks for one.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/condition_variable.h"
#include "utils/timestamp.h"

#include "opensearch/api.h"
#include "opensearch/http.h"
#include "shipper/ship_wait.h"
#include "store/catalog_outbox.h"
#include "store/catalog_rejected.h"
#include "util/xact.h"

/* what holds an index back while a document of it is quarantined */
#define REJECTED "Documents of the index are quarantined as rejected (see flusso_rejected())."

/* The generation the index's alias serves, or NULL. */
static ShipGeneration *
served_generation(ShipIndex *x)
{
	ListCell   *lc;

	foreach(lc, x->generations)
	{
		ShipGeneration *g = lfirst(lc);

		if (g->row.state == GENERATION_SERVED && g->row.created && g->server != NULL)
			return g;
	}
	return NULL;
}

/* Is a generation of x being seeded, or seeded and not yet served? */
static bool
generation_coming(ShipIndex *x)
{
	ListCell   *lc;

	foreach(lc, x->generations)
	{
		ShipGeneration *g = lfirst(lc);

		if (g->row.state == GENERATION_SEEDING || g->row.state == GENERATION_SEEDED)
			return true;
	}
	return false;
}

/*
 * Why shipping cannot take x's changes into OpenSearch now, in words that
 * quote nothing (flusso_status() has the details), or NULL.  While a new
 * generation is on its way, the one served may miss what the new one is
 * seeded for (a rewritten table, a changed definition), as the table sink
 * may during its seed: no wait is answered true then either.
 */
static const char *
blocked_by(ShipIndex *x, ShipRuntime *rt)
{
	if (!x->live)
		return "The index has no OpenSearch sink.";
	if (x->server == NULL || !x->usable)
		return "The index's OpenSearch server cannot be used (see ship_error in flusso_status()).";
	if (x->stopped != NULL || x->conflict != NULL)
		return "Shipping to OpenSearch is stopped (see ship_error in flusso_status()).";
	if (rt->failures > 0)
		return "Shipping to OpenSearch is failing (see ship_error in flusso_status()).";
	if (served_generation(x) == NULL || generation_coming(x))
		return "The index is being seeded into a new OpenSearch index: the one served may miss changes until it is replaced.";
	return NULL;
}

/* Publish what holds x back, and wake the sessions when that changed. */
static void
publish_blocked(IndexStatus *status, const char *blocked, bool *moved)
{
	const char *now = blocked ? blocked : "";

	if (strcmp(status->ship_blocked, now) != 0)
	{
		strlcpy(status->ship_blocked, now, FLUSSO_ERROR_LEN);
		*moved = true;
	}
}

/*
 * Does OpenSearch hold every change of x up to what the worker applied
 * by applied_at?  False as well when a document is quarantined, which
 * *rejected says.
 */
static bool
outbox_drained(ShipIndex *x, TimestampTz applied_at, bool *rejected)
{
	bool		drained = false;

	*rejected = false;
	if (!xact_begin(true, NULL, 0))
		return false;
	if (catalog_count_rejected(x->name) > 0)
		*rejected = true;
	else
		drained = !outbox_holds_queued_by(x->name, applied_at);
	xact_commit();
	return drained;
}

/*
 * After x's turn: say what holds its shipping back, and, while a session
 * waits for more than is published, how far OpenSearch holds its changes,
 * refreshing the served generation once for those who wait for _search.
 */
void
ship_answer_waiters(ShipIndex *x, ShipRuntime *rt, DatabaseEntry *entry)
{
	const char *blocked = blocked_by(x, rt);
	IndexStatus *status;
	XLogRecPtr	applied;
	TimestampTz applied_at;
	XLogRecPtr	shipped;
	XLogRecPtr	refreshed;
	XLogRecPtr	ship_wanted;
	XLogRecPtr	refresh_wanted;
	bool		was_rejected;
	bool		rejected = false;
	bool		moved = false;
	ShipGeneration *served;

	LWLockAcquire(flusso_shared->lock, LW_SHARED);
	status = shared_index_status(entry, x->name);
	if (status == NULL)
	{
		LWLockRelease(flusso_shared->lock);
		return;
	}
	applied = status->applied_lsn;
	applied_at = status->applied_at;
	shipped = status->shipped_lsn;
	refreshed = status->refreshed_lsn;
	ship_wanted = status->ship_wanted_lsn;
	refresh_wanted = status->refresh_wanted_lsn;
	was_rejected = strcmp(status->ship_blocked, REJECTED) == 0;
	LWLockRelease(flusso_shared->lock);

	/* a position to look for: the first one published that covers a wait */
	if (rt->wait_lsn > applied || rt->wait_lsn <= shipped)
		rt->wait_lsn = InvalidXLogRecPtr;
	if (XLogRecPtrIsInvalid(rt->wait_lsn) && ship_wanted > shipped && applied >= ship_wanted)
	{
		rt->wait_lsn = applied;
		rt->wait_at = applied_at;
	}
	/* looked at while a session waits, or until the quarantine is empty */
	if (blocked == NULL && (!XLogRecPtrIsInvalid(rt->wait_lsn) || was_rejected))
	{
		if (outbox_drained(x, XLogRecPtrIsInvalid(rt->wait_lsn) ? 0 : rt->wait_at, &rejected) &&
			!XLogRecPtrIsInvalid(rt->wait_lsn))
			shipped = rt->wait_lsn;
		if (rejected)
			blocked = REJECTED;
	}

	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	status = shared_index_status(entry, x->name);
	if (status)
	{
		publish_blocked(status, blocked, &moved);
		if (blocked == NULL && shipped > status->shipped_lsn && status->applied_lsn >= shipped)
		{
			status->shipped_lsn = shipped;
			moved = true;
		}
	}
	LWLockRelease(flusso_shared->lock);

	/* one refresh for every session waiting for _search to see what is shipped */
	served = blocked == NULL ? served_generation(x) : NULL;
	if (served && refresh_wanted > refreshed && shipped > refreshed)
	{
		if (os_succeeded(os_refresh(served->server, served->row.concrete), 0))
		{
			LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
			status = shared_index_status(entry, x->name);
			if (status && shipped > status->refreshed_lsn && status->shipped_lsn >= shipped)
			{
				status->refreshed_lsn = shipped;
				moved = true;
			}
			LWLockRelease(flusso_shared->lock);
		}
	}
	if (moved)
		shared_progress_made(entry);
}

/* Does a session wait for the shipper to get further with index? */
bool
ship_waited_for(const char *index)
{
	DatabaseEntry *entry;
	IndexStatus *status;
	bool		waited = false;

	LWLockAcquire(flusso_shared->lock, LW_SHARED);
	entry = shared_database(MyDatabaseId, false);
	status = entry ? shared_index_status(entry, index) : NULL;
	if (status)
		waited = status->ship_wanted_lsn > status->shipped_lsn ||
			status->refresh_wanted_lsn > status->refreshed_lsn;
	LWLockRelease(flusso_shared->lock);
	return waited;
}

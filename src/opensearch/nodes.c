/*-------------------------------------------------------------------------
 *
 * nodes.c
 *	  Which node of a server's cluster a request goes to.
 *
 * A server's url option names one base URL, or several nodes of one
 * cluster, separated by commas, for a cluster reached node by node (no
 * load balancer in front).  Requests spread over the nodes that answer,
 * in turn.  A node a request could not reach (refused, reset, timed out,
 * no answer) is set aside: for a second, twice as long each time it fails
 * again, up to a minute; then a request tries it again, and its first
 * answer brings it back.  When every node is set aside, the one that
 * comes back first is tried.  What a node answered (any HTTP status)
 * is OpenSearch's business, not the node's.
 *
 * The state is the process's own (the shipper's, a backend's), by server
 * and URL: a process that starts knows nothing yet, and its first request
 * to a dead node finds out.  http.c sends a request that could not reach
 * its node to another one at once (once per node), so that a node lost
 * costs a caller nothing but that retry.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/pg_list.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "opensearch/nodes.h"

#define ASIDE_MIN_MS 1000
#define ASIDE_MAX_MS 60000

/* What the process knows of one node. */
typedef struct NodeState
{
	Oid			serverid;
	char	   *url;			/* in TopMemoryContext */
	int			failures;		/* in a row */
	TimestampTz aside_until;	/* 0: answering */
} NodeState;

static List *states = NIL;		/* NodeState, in TopMemoryContext */
static int	next_turn = 0;		/* round robin, over every server's nodes */

static NodeState *
state_of(const OpenSearchServer *server, const char *url)
{
	ListCell   *lc;
	NodeState  *state;
	MemoryContext old;

	foreach(lc, states)
	{
		state = lfirst(lc);
		if (state->serverid == server->serverid && strcmp(state->url, url) == 0)
			return state;
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	state = palloc0(sizeof(NodeState));
	state->serverid = server->serverid;
	state->url = pstrdup(url);
	states = lappend(states, state);
	MemoryContextSwitchTo(old);
	return state;
}

/*
 * The node the next request to server goes to: the next in turn that is
 * not set aside, but not avoid (a node the request could not reach, or
 * NULL); the one set aside that comes back first when all are.  NULL only
 * when avoid is the server's one node.
 */
const char *
os_node_pick(const OpenSearchServer *server, const char *avoid)
{
	TimestampTz now = GetCurrentTimestamp();
	const char *soonest = NULL;
	TimestampTz soonest_at = 0;

	for (int i = 0; i < server->nnodes; i++)
	{
		const char *url = server->nodes[(next_turn + i) % server->nnodes];
		NodeState  *state = state_of(server, url);

		if (avoid && strcmp(url, avoid) == 0)
			continue;
		if (state->aside_until <= now)
		{
			next_turn = (next_turn + i + 1) % server->nnodes;
			return url;
		}
		if (soonest == NULL || state->aside_until < soonest_at)
		{
			soonest = url;
			soonest_at = state->aside_until;
		}
	}
	return soonest;
}

/* A request to url reached it: it answers. */
void
os_node_answered(const OpenSearchServer *server, const char *url)
{
	NodeState  *state = state_of(server, url);

	if (state->failures > 0 && server->nnodes > 1)
		ereport(LOG,
				(errmsg("flusso: node %s of OpenSearch server \"%s\" answers again", url,
						server->name)));
	state->failures = 0;
	state->aside_until = 0;
}

/*
 * A request to url could not reach it, because of error: set it aside,
 * longer each time in a row.  The milliseconds it is set aside for.
 */
long
os_node_failed(const OpenSearchServer *server, const char *url, const char *error)
{
	NodeState  *state = state_of(server, url);
	long		aside_ms = Min((long) ASIDE_MIN_MS << Min(state->failures, 6), (long) ASIDE_MAX_MS);

	if (state->failures == 0 && server->nnodes > 1)
		ereport(LOG,
				(errmsg("flusso: node %s of OpenSearch server \"%s\" does not answer (%s): requests go to its other nodes",
						url, server->name, error)));
	state->failures++;
	state->aside_until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), aside_ms);
	return aside_ms;
}

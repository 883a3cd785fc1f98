/*-------------------------------------------------------------------------
 *
 * nodes.c
 *	  Which node of a server's cluster a request goes to, and which of the
 *	  nodes a server names belong to that one cluster.
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
 * Several nodes must be one cluster: a node of another one would take
 * bulks and answer 2xx, and what it holds is not what the server's
 * indexes hold.  So, before a request of a server with several nodes
 * picks one, each node not known yet is asked GET / for its cluster_uuid
 * (again once it was set aside, since it may have been restarted, and a
 * minute after it was found a stranger).  The server's cluster is the one
 * most of the nodes identified first belong to, the first named winning a
 * tie; this process keeps it from then on.  A node of another cluster is
 * never picked, so nothing it answers counts: no acknowledgement, no
 * digest, no check of an alias.  A node that answers GET / without a
 * cluster_uuid (a role without cluster:monitor/main) can be used only
 * while no node's cluster is known; flusso_check() says so.
 *
 * The state is the process's own (the shipper's, a backend's), by server
 * and URL: a process that starts knows nothing yet, and its first request
 * to a dead node finds out.  http.c sends a request that could not reach
 * its node to another one at once (once per node), among the nodes known
 * to be of the cluster, so that a node lost costs a caller nothing but
 * that retry.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/pg_list.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "opensearch/http.h"
#include "opensearch/json.h"
#include "opensearch/nodes.h"

#define ASIDE_MIN_MS 1000
#define ASIDE_MAX_MS 60000
/* how long a node found of another cluster, or unverified, is left alone */
#define RECHECK_MS 60000

/* What the process knows of one node. */
typedef struct NodeState
{
	Oid			serverid;
	char	   *url;			/* in TopMemoryContext */
	int			failures;		/* in a row */
	TimestampTz aside_until;	/* 0: answering */
	NodeIdentity id;
	TimestampTz identified_at;
} NodeState;

/* The cluster of a server's nodes, as this process decided it. */
typedef struct ServerCluster
{
	Oid			serverid;
	char	   *url;			/* the server's url option when decided */
	char		uuid[OS_CLUSTER_ID_LEN];
	char		name[OS_CLUSTER_ID_LEN];
} ServerCluster;

static List *states = NIL;		/* NodeState, in TopMemoryContext */
static List *clusters = NIL;	/* ServerCluster, in TopMemoryContext */
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

/* The cluster decided for server (its url as it is now), or NULL. */
static ServerCluster *
cluster_of(const OpenSearchServer *server)
{
	ListCell   *lc;

	foreach(lc, clusters)
	{
		ServerCluster *c = lfirst(lc);

		if (c->serverid == server->serverid && strcmp(c->url, server->url) == 0)
			return c;
	}
	return NULL;
}

static ServerCluster *
decide_cluster(const OpenSearchServer *server, const NodeState *state)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
	ServerCluster *c = palloc0(sizeof(ServerCluster));

	c->serverid = server->serverid;
	c->url = pstrdup(server->url);
	strlcpy(c->uuid, state->id.cluster_uuid, OS_CLUSTER_ID_LEN);
	strlcpy(c->name, state->id.cluster_name, OS_CLUSTER_ID_LEN);
	clusters = lappend(clusters, c);
	MemoryContextSwitchTo(old);
	return c;
}

/*
 * Ask node state its cluster (GET /, to that node alone).  Unreachable,
 * it is set aside by the request (http.c) and stays unknown.
 */
static void
ask_cluster(const OpenSearchServer *server, NodeState *state)
{
	HttpRequest *req = http_request_to_node(server, state->url, "GET", "/");
	Jsonb	   *doc;
	char	   *uuid = NULL;
	char	   *name = NULL;

	http_run(req);
	if (req->status == 0)
	{
		state->id.membership = NODE_UNKNOWN;
		strlcpy(state->id.problem, req->error, sizeof(state->id.problem));
		return;
	}
	doc = req->status == 200 ? os_json_parse(req->response) : NULL;
	if (doc != NULL)
	{
		uuid = os_json_text(&doc->root, "cluster_uuid");
		name = os_json_text(&doc->root, "cluster_name");
	}
	state->identified_at = GetCurrentTimestamp();
	state->id.cluster_uuid[0] = '\0';
	state->id.cluster_name[0] = '\0';
	/* "_na_": a node that has not joined a cluster yet */
	if (uuid == NULL || uuid[0] == '\0' || strcmp(uuid, "_na_") == 0)
	{
		state->id.membership = NODE_UNVERIFIED;
		if (req->status == 200)
			strlcpy(state->id.problem, "GET / answered without a cluster_uuid",
					sizeof(state->id.problem));
		else
			snprintf(state->id.problem, sizeof(state->id.problem),
					 "GET / answered HTTP status %ld", req->status);
		return;
	}
	state->id.problem[0] = '\0';
	strlcpy(state->id.cluster_uuid, uuid, OS_CLUSTER_ID_LEN);
	strlcpy(state->id.cluster_name, name ? name : "", OS_CLUSTER_ID_LEN);
	state->id.membership = NODE_IDENTIFIED;
}

/* Is state's identity to be asked again now? */
static bool
due(const NodeState *state, TimestampTz now)
{
	if (state->aside_until > now)
		return false;
	switch (state->id.membership)
	{
		case NODE_UNKNOWN:
			return true;
		case NODE_STRANGER:
		case NODE_UNVERIFIED:
			return TimestampDifferenceExceeds(state->identified_at, now, RECHECK_MS);
		case NODE_IDENTIFIED:
		case NODE_MEMBER:
			return false;
	}
	return false;
}

/*
 * Identify the nodes of server whose identity is due (every_node: all of
 * them, set aside or not, for flusso_check()), then say of each
 * identified whether it is of the server's cluster, deciding that cluster
 * first if this process has not yet: the one most identified nodes are
 * of, the first named among them winning a tie.
 */
void
os_nodes_identify(const OpenSearchServer *server, bool every_node)
{
	TimestampTz now = GetCurrentTimestamp();
	ServerCluster *cluster;
	NodeState **nodes;

	if (server->nnodes < 2)
		return;
	nodes = palloc(sizeof(NodeState *) * server->nnodes);
	for (int i = 0; i < server->nnodes; i++)
	{
		nodes[i] = state_of(server, server->nodes[i]);
		if (every_node || due(nodes[i], now))
			ask_cluster(server, nodes[i]);
	}
	cluster = cluster_of(server);
	if (cluster == NULL)
	{
		int			best = -1;
		int			best_count = 0;

		for (int i = 0; i < server->nnodes; i++)
		{
			int			count = 0;

			if (nodes[i]->id.cluster_uuid[0] == '\0')
				continue;
			for (int j = 0; j < server->nnodes; j++)
				count += strcmp(nodes[j]->id.cluster_uuid, nodes[i]->id.cluster_uuid) == 0;
			if (count > best_count)
			{
				best = i;
				best_count = count;
			}
		}
		if (best >= 0)
			cluster = decide_cluster(server, nodes[best]);
	}
	for (int i = 0; cluster && i < server->nnodes; i++)
	{
		NodeState  *state = nodes[i];
		bool		member;

		if (state->id.membership != NODE_IDENTIFIED && state->id.membership != NODE_STRANGER)
			continue;
		member = strcmp(state->id.cluster_uuid, cluster->uuid) == 0;
		if (!member && state->id.membership == NODE_IDENTIFIED)
			ereport(LOG,
					(errmsg("flusso: node %s of OpenSearch server \"%s\" belongs to cluster \"%s\" (%s), not to the server's cluster \"%s\" (%s): it is set aside, and nothing it answers counts",
							state->url, server->name, state->id.cluster_name, state->id.cluster_uuid,
							cluster->name, cluster->uuid)));
		state->id.membership = member ? NODE_MEMBER : NODE_STRANGER;
	}
	pfree(nodes);
}

/* May a request go to state, as far as its cluster goes? */
static bool
usable(const OpenSearchServer *server, const NodeState *state)
{
	if (server->nnodes < 2)
		return true;
	switch (state->id.membership)
	{
		case NODE_MEMBER:
			return true;
		case NODE_UNVERIFIED:
			return cluster_of(server) == NULL;
		case NODE_UNKNOWN:
		case NODE_IDENTIFIED:
		case NODE_STRANGER:
			return false;
	}
	return false;
}

/*
 * The node the next request to server goes to: the next in turn that is
 * of the server's cluster and not set aside, but not avoid (a node the
 * request could not reach, or NULL); when every such node is set aside,
 * the one that comes back first, of those not known to be of another
 * cluster.  Without avoid (a new request), the nodes not identified yet
 * are first (os_nodes_identify); with avoid (a request sent again from
 * the middle of others, http.c), only nodes known to be of the cluster
 * are taken.  NULL when no node may be sent the request.
 */
const char *
os_node_pick(const OpenSearchServer *server, const char *avoid)
{
	TimestampTz now;
	const char *soonest = NULL;
	TimestampTz soonest_at = 0;

	if (avoid == NULL)
		os_nodes_identify(server, false);
	now = GetCurrentTimestamp();
	for (int i = 0; i < server->nnodes; i++)
	{
		const char *url = server->nodes[(next_turn + i) % server->nnodes];
		NodeState  *state = state_of(server, url);

		if (avoid && strcmp(url, avoid) == 0)
			continue;
		if (state->aside_until <= now && usable(server, state))
		{
			next_turn = (next_turn + i + 1) % server->nnodes;
			return url;
		}
		/* one set aside before it could be asked may come back first */
		if (!usable(server, state) &&
			(avoid != NULL || state->id.membership != NODE_UNKNOWN))
			continue;
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
 * longer each time in a row, and ask its cluster again once it is back.
 * The milliseconds it is set aside for.
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
	if (state->id.membership != NODE_STRANGER)
		state->id.membership = NODE_UNKNOWN;
	return aside_ms;
}

/* What this process knows of node url of server. */
const NodeIdentity *
os_node_identity(const OpenSearchServer *server, const char *url)
{
	return &state_of(server, url)->id;
}

/*
 * The cluster this process decided server's nodes form, if it has: its
 * uuid and name, pointers into this module's state.
 */
bool
os_nodes_cluster(const OpenSearchServer *server, const char **uuid, const char **name)
{
	ServerCluster *cluster = cluster_of(server);

	if (cluster == NULL)
		return false;
	*uuid = cluster->uuid;
	*name = cluster->name;
	return true;
}

/*
 * The nodes of server this process found of another cluster, in words for
 * flusso_status(), or NULL when none is.
 */
char *
os_nodes_strangers(const OpenSearchServer *server)
{
	ServerCluster *cluster = cluster_of(server);
	StringInfoData out;

	if (cluster == NULL)
		return NULL;
	initStringInfo(&out);
	for (int i = 0; i < server->nnodes; i++)
	{
		NodeState  *state = state_of(server, server->nodes[i]);

		if (state->id.membership == NODE_STRANGER)
			appendStringInfo(&out, "%snode %s belongs to cluster \"%s\" (%s)",
							 out.len > 0 ? "; " : "", state->url,
							 state->id.cluster_name, state->id.cluster_uuid);
	}
	if (out.len == 0)
		return NULL;
	return psprintf("OpenSearch server \"%s\": %s, not to the server's cluster \"%s\" (%s): set aside, nothing it answers counts",
					server->name, out.data, cluster->name, cluster->uuid);
}

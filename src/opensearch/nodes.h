/*-------------------------------------------------------------------------
 *
 * nodes.h
 *	  Which node of a server's cluster a request goes to, which nodes
 *	  answer, and which belong to the server's one cluster, as this
 *	  process has seen.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_OPENSEARCH_NODES_H
#define FLUSSO_OPENSEARCH_NODES_H

#include "opensearch/server.h"

/* room for a cluster_uuid (22 characters) or a cluster name */
#define OS_CLUSTER_ID_LEN 128

/* What a process knows of a node's cluster. */
typedef enum NodeMembership
{
	NODE_UNKNOWN,				/* not asked yet, or could not be reached */
	NODE_IDENTIFIED,			/* its cluster known, not yet compared */
	NODE_MEMBER,				/* of the server's cluster */
	NODE_STRANGER,				/* of another cluster: never sent anything */
	NODE_UNVERIFIED				/* answers GET / without its cluster_uuid */
} NodeMembership;

/* What a process knows of a node's cluster, for flusso_check(). */
typedef struct NodeIdentity
{
	NodeMembership membership;
	char		cluster_uuid[OS_CLUSTER_ID_LEN];	/* "" until known */
	char		cluster_name[OS_CLUSTER_ID_LEN];
	char		problem[256];	/* why it is unknown or unverified */
} NodeIdentity;

extern const char *os_node_pick(const OpenSearchServer *server, const char *avoid);
extern void os_node_answered(const OpenSearchServer *server, const char *url);
extern long os_node_failed(const OpenSearchServer *server, const char *url,
						   const char *error);
extern void os_nodes_identify(const OpenSearchServer *server, bool every_node);
extern const NodeIdentity *os_node_identity(const OpenSearchServer *server, const char *url);
extern bool os_nodes_cluster(const OpenSearchServer *server, const char **uuid,
							 const char **name);
extern char *os_nodes_strangers(const OpenSearchServer *server);

#endif							/* FLUSSO_OPENSEARCH_NODES_H */

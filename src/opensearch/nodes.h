/*-------------------------------------------------------------------------
 *
 * nodes.h
 *	  Which node of a server's cluster a request goes to, and which nodes
 *	  answer, as this process has seen.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_OPENSEARCH_NODES_H
#define FLUSSO_OPENSEARCH_NODES_H

#include "opensearch/server.h"

extern const char *os_node_pick(const OpenSearchServer *server, const char *avoid);
extern void os_node_answered(const OpenSearchServer *server, const char *url);
extern long os_node_failed(const OpenSearchServer *server, const char *url,
						   const char *error);

#endif							/* FLUSSO_OPENSEARCH_NODES_H */

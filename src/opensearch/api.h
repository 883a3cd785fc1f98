/*-------------------------------------------------------------------------
 *
 * api.h
 *	  The OpenSearch REST calls flusso makes, each run to its end: the
 *	  caller judges the outcome from the request's status and response.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_OPENSEARCH_API_H
#define FLUSSO_OPENSEARCH_API_H

#include "nodes/pg_list.h"
#include "opensearch/http.h"

/*
 * Who made an OpenSearch index, as flusso records it in the index's
 * _meta (source/source.c): all NULL but index when there is no record.
 */
typedef struct OwnerRecord
{
	char	   *index;
	char	   *source;			/* the identity of the database */
	char	   *database;
	char	   *database_oid;
	char	   *system_identifier;
} OwnerRecord;

extern char *os_index_body(const char *mapping, int shards, int replicas, const char *refresh,
						   const char *owner);

/* a 2xx, or one of the statuses the caller counts as done too */
extern bool os_succeeded(const HttpRequest *req, long also_ok);

extern HttpRequest *os_cluster_info(const OpenSearchServer *server);
extern HttpRequest *os_create_index(const OpenSearchServer *server, const char *index,
									const char *body);
extern HttpRequest *os_delete_index(const OpenSearchServer *server, const char *index);
extern HttpRequest *os_put_settings(const OpenSearchServer *server, const char *index,
									const char *settings);
extern HttpRequest *os_refresh(const OpenSearchServer *server, const char *index);
extern List *os_alias_holders(const OpenSearchServer *server, const char *alias,
							  HttpRequest **req);
extern char *os_index_dynamic(const OpenSearchServer *server, const char *index,
							  HttpRequest **req);
extern List *os_index_owners(const OpenSearchServer *server, List *indexes, HttpRequest **req);
extern HttpRequest *os_put_mappings(const OpenSearchServer *server, const char *index,
									 const char *mapping);
extern HttpRequest *os_put_owner(const OpenSearchServer *server, const char *index,
								 const char *owner);
extern HttpRequest *os_move_alias(const OpenSearchServer *server, const char *alias,
								  List *from, const char *to);
extern HttpRequest *os_scroll_page(const OpenSearchServer *server, const char *index,
								   const char *scroll_id, int size, bool source);
extern void os_scroll_clear(const OpenSearchServer *server, const char *scroll_id);

#endif							/* FLUSSO_OPENSEARCH_API_H */

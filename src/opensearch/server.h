/*-------------------------------------------------------------------------
 *
 * server.h
 *	  An OpenSearch or Elasticsearch cluster as PostgreSQL knows it: a
 *	  foreign server of the flusso_opensearch wrapper (URL or Cloud ID and
 *	  cluster-wide options) and the user mapping of the role flusso ships
 *	  for (credentials).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_OPENSEARCH_SERVER_H
#define FLUSSO_OPENSEARCH_SERVER_H

#define OPENSEARCH_FDW "flusso_opensearch"

typedef struct OpenSearchServer
{
	char	   *name;			/* the foreign server */
	Oid			serverid;
	Oid			role;			/* whose user mapping was looked up */
	char	   *url;			/* the option: one base URL, or several */
	char	  **nodes;			/* each base URL, without a trailing '/' */
	int			nnodes;
	char	   *nodes_left_out; /* http nodes of a server that names https
								 * ones too (made before that was refused):
								 * never sent credentials, nor anything */
	char	   *index_prefix;
	char	   *ca_file;
	char	   *client_cert;
	char	   *client_key;
	bool		tls_verify;
	char	   *aws_region;		/* set: requests are signed (SigV4) */
	char	   *aws_service;
	int			connect_timeout;	/* seconds */
	int			request_timeout;	/* seconds */
	int			bulk_max_documents;
	int			bulk_max_bytes;
	int			bulks_in_flight;	/* per index, at once */

	/* from the user mapping of role, or PUBLIC's, if there is one */
	bool		has_mapping;
	char	   *user;
	char	   *password;
	char	   *aws_access_key_id;
	char	   *aws_secret_access_key;
	char	   *aws_session_token;
	char	   *api_key;		/* encoded: base64(id:key) */
	char	   *bearer_token;
} OpenSearchServer;

extern OpenSearchServer *os_server_load(const char *server_name, Oid role, bool missing_ok);
extern bool os_server_usable_by(const char *server_name, Oid role);
extern const char *os_prefix_problem(const char *prefix);

#endif							/* FLUSSO_OPENSEARCH_SERVER_H */

/*-------------------------------------------------------------------------
 *
 * opensearch.c
 *	  flusso_check() for an index's OpenSearch sink: the server exists and
 *	  the owner may use it, the cluster (each node a server names) answers
 *	  and takes the credentials of the owner's user mapping, it accepts the
 *	  index's mapping (an index is created with it and deleted again), and
 *	  what the shipper says:
 *	  stopped, in conflict over its alias, documents rejected.
 *
 * The cluster is asked only when the role checking has the privileges of
 * the index's owner: the requests carry the owner's credentials, and
 * another member of flusso_admin may not spend them (nor create and
 * delete indexes with them).
 *
 * A request's failure is reported with the server, the status and
 * OpenSearch's error type; the reason OpenSearch gives for refusing a
 * mapping is shown too, since it quotes the mapping, not documents.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"

#include "check/opensearch.h"
#include "util/pinned.h"
#include "store/catalog_sink.h"
#include "opensearch/api.h"
#include "opensearch/json.h"
#include "opensearch/nodes.h"
#include "sink/sink.h"

#define PATH "sinks.opensearch"

/*
 * The nodes a server names: does each answer, and are they one cluster?
 * Those that do not answer are set aside by the shipper, which sends to
 * the others: a warning each.  One of another cluster (its cluster_uuid,
 * from GET /) is never sent anything: an error.  Then an info row with
 * how many answer, and their cluster.  (The cluster as a whole,
 * credentials and mapping, is asked through a node of it afterwards.)
 * http nodes named beside https ones are never used: an error.
 */
static void
check_nodes(DiagnosticSink *dsink, const OpenSearchServer *server)
{
	int			answering = 0;
	const char *uuid = "";
	const char *name = "";
	bool		decided;

	if (server->nodes_left_out)
		diag_add(dsink, SEVERITY_ERROR, PATH,
				 psprintf("Name every node with https://: ALTER SERVER %s OPTIONS (SET url '...').",
						  quote_identifier(server->name)),
				 "OpenSearch server \"%s\" names http nodes beside https ones (%s): they are never used, so that the user mapping's credentials never travel in clear text",
				 server->name, server->nodes_left_out);
	if (server->nnodes < 2)
		return;
	os_nodes_identify(server, true);
	decided = os_nodes_cluster(server, &uuid, &name);
	for (int i = 0; i < server->nnodes; i++)
	{
		const NodeIdentity *id = os_node_identity(server, server->nodes[i]);

		switch (id->membership)
		{
			case NODE_MEMBER:
			case NODE_IDENTIFIED:
				answering++;
				break;
			case NODE_UNKNOWN:
				diag_add(dsink, SEVERITY_WARNING, PATH,
						 "Requests go to the nodes that answer; a node is tried again now and then.",
						 "node %s of OpenSearch server \"%s\" cannot be reached: %s",
						 server->nodes[i], server->name, id->problem);
				break;
			case NODE_STRANGER:
				diag_add(dsink, SEVERITY_ERROR, PATH,
						 psprintf("Name only nodes of one cluster: ALTER SERVER %s OPTIONS (SET url '...').",
								  quote_identifier(server->name)),
						 "node %s of OpenSearch server \"%s\" belongs to cluster \"%s\" (%s), not to cluster \"%s\" (%s) of its other nodes: it is set aside, and nothing it answers counts",
						 server->nodes[i], server->name, id->cluster_name, id->cluster_uuid,
						 name, uuid);
				break;
			case NODE_UNVERIFIED:
				answering++;
				diag_add(dsink, SEVERITY_WARNING, PATH,
						 "Let the user mapping's role read the cluster's identity (cluster:monitor/main), so that flusso can tell that every node is of one cluster.",
						 decided
						 ? "node %s of OpenSearch server \"%s\" does not say which cluster it belongs to (%s): it is set aside, since its other nodes do"
						 : "node %s of OpenSearch server \"%s\" does not say which cluster it belongs to (%s): flusso cannot tell that the server's nodes are one cluster",
						 server->nodes[i], server->name, id->problem);
				break;
		}
	}
	if (decided)
		diag_add(dsink, SEVERITY_INFO, PATH, NULL,
				 "%d of the %d nodes of OpenSearch server \"%s\" answer; its cluster is \"%s\" (%s)",
				 answering, server->nnodes, server->name, name, uuid);
	else
		diag_add(dsink, SEVERITY_INFO, PATH, NULL,
				 "%d of the %d nodes of OpenSearch server \"%s\" answer",
				 answering, server->nnodes, server->name);
}

/*
 * Which engine answers GET /: OpenSearch names its distribution;
 * Elasticsearch names none and says its tagline.
 */
static const char *
engine_name(JsonbContainer *info)
{
	JsonbContainer *version = info ? os_json_object(info, "version") : NULL;
	char	   *distribution = version ? os_json_text(version, "distribution") : NULL;
	char	   *tagline = info ? os_json_text(info, "tagline") : NULL;

	if (distribution)
		return distribution;
	if (tagline && strcmp(tagline, "You Know, for Search") == 0)
		return "elasticsearch";
	return "a cluster";
}

/* the major versions of each engine flusso is tested with */
#define OPENSEARCH_TESTED_MIN 2
#define OPENSEARCH_TESTED_MAX 3
#define ELASTICSEARCH_TESTED_MIN 8
#define ELASTICSEARCH_TESTED_MAX 9

/*
 * Is the engine's version (GET /'s version.number) one flusso is tested
 * with?  An older one may lack what flusso sends (a warning); a newer one
 * is said, as nothing here knows what it changed.
 */
static void
check_version(DiagnosticSink *dsink, const OpenSearchServer *server, const char *engine,
			  const char *number)
{
	bool		elasticsearch = strcmp(engine, "elasticsearch") == 0;
	int			min = elasticsearch ? ELASTICSEARCH_TESTED_MIN : OPENSEARCH_TESTED_MIN;
	int			max = elasticsearch ? ELASTICSEARCH_TESTED_MAX : OPENSEARCH_TESTED_MAX;
	const char *tested;
	long		major;
	char	   *end;

	if (number == NULL || (!elasticsearch && strcmp(engine, "opensearch") != 0))
		return;
	errno = 0;
	major = strtol(number, &end, 10);
	if (errno != 0 || end == number || (major >= min && major <= max))
		return;
	tested = psprintf("%s %d.x to %d.x", elasticsearch ? "Elasticsearch" : "OpenSearch", min, max);
	if (major < min)
		diag_add(dsink, SEVERITY_WARNING, PATH,
				 "Upgrade the cluster: flusso may send what this version lacks, and its refusals would stop shipping.",
				 "OpenSearch server \"%s\" runs %s %s, older than the versions flusso is tested with (%s)",
				 server->name, engine, number, tested);
	else if (major > max)
		diag_add(dsink, SEVERITY_INFO, PATH, NULL,
				 "OpenSearch server \"%s\" runs %s %s, newer than the versions flusso is tested with (%s)",
				 server->name, engine, number, tested);
}

/*
 * Can the cluster be reached, with the owner's credentials?  The engine's
 * name if so, else NULL.
 */
static const char *
check_reachable(DiagnosticSink *dsink, const OpenSearchServer *server, const char *owner)
{
	HttpRequest *req = os_cluster_info(server);
	Jsonb	   *info;
	JsonbContainer *version;
	const char *engine;
	char	   *number;

	if (req->status == 0)
	{
		diag_add(dsink, SEVERITY_ERROR, PATH,
				 "Check the server's url option, the network, and for https its certificate (ca_file, tls_verify).",
				 "OpenSearch server \"%s\" cannot be reached: %s", server->name, req->error);
		return NULL;
	}
	if (req->status == 401 || req->status == 403)
	{
		diag_add(dsink, SEVERITY_ERROR, PATH,
				 psprintf("Give role \"%s\" credentials the cluster takes: CREATE USER MAPPING FOR %s SERVER %s OPTIONS (user '...', password '...'), or (api_key '...') or (bearer_token '...').",
						  owner, quote_identifier(owner), quote_identifier(server->name)),
				 "OpenSearch server \"%s\" refuses the credentials of %s (HTTP %ld)",
				 server->name,
				 server->has_mapping ? psprintf("the user mapping of role \"%s\"", owner)
				 : psprintf("role \"%s\", which has no user mapping for it", owner),
				 req->status);
		return NULL;
	}
	if (!os_succeeded(req, 0))
	{
		diag_add(dsink, SEVERITY_ERROR, PATH, NULL, "%s", http_failure(req));
		return NULL;
	}
	info = os_json_parse(req->response);
	version = info ? os_json_object(&info->root, "version") : NULL;
	number = version ? os_json_text(version, "number") : NULL;
	engine = engine_name(info ? &info->root : NULL);
	diag_add(dsink, SEVERITY_INFO, PATH, NULL,
			 "OpenSearch server \"%s\" answers: %s %s", server->name, engine, number ? number : "");
	check_version(dsink, server, engine, number);
	return engine;
}

/*
 * Field types the two engines name differently.  A mapping written for one
 * is refused by the other ("No handler for type [flattened] ..."); the
 * refusal is the cluster's, the counterpart only a hint.
 */
static const struct
{
	const char *opensearch;
	const char *elasticsearch;
}			counterpart_types[] = {
	{"flat_object", "flattened"},
	{"knn_vector", "dense_vector"},
};

/*
 * The hint for a mapping the cluster refuses: the other engine's name of a
 * type the refusal names, when it is one of counterpart_types.
 */
static const char *
mapping_hint(const char *engine, const char *reason)
{
	bool		elasticsearch = strcmp(engine, "elasticsearch") == 0;

	if (reason == NULL || (!elasticsearch && strcmp(engine, "opensearch") != 0))
		return "flusso_mapping() shows the body; a field type or analyzer the cluster lacks (a plugin) is the usual cause.";
	for (int i = 0; i < lengthof(counterpart_types); i++)
	{
		const char *foreign = elasticsearch ? counterpart_types[i].opensearch
			: counterpart_types[i].elasticsearch;
		const char *own = elasticsearch ? counterpart_types[i].elasticsearch
			: counterpart_types[i].opensearch;

		if (strstr(reason, psprintf("[%s]", foreign)))
			return psprintf("\"%s\" is %s's type; %s's counterpart is \"%s\" (its options differ: see the engine's documentation).",
							foreign, elasticsearch ? "OpenSearch" : "Elasticsearch",
							elasticsearch ? "Elasticsearch" : "OpenSearch", own);
	}
	return "flusso_mapping() shows the body; a field type or setting of the other engine, or one a plugin brings, is the usual cause.";
}

/*
 * Does the cluster accept the mapping?  An index is created with it, under
 * a name no flusso index takes, and deleted again, before the shipper
 * creates anything.
 */
static void
check_mapping(DiagnosticSink *dsink, const OpenSearchServer *server, const StoredIndex *index,
			  const char *engine)
{
	char	   *probe = psprintf("%s%s-check-%d", server->index_prefix, index->name, MyProcPid);
	char	   *body = os_index_body(schema_mapping_json(index->schema), 1, 0, "-1", NULL);
	HttpRequest *req = os_create_index(server, probe, body);

	if (!os_succeeded(req, 0))
	{
		char	   *reason = os_json_error_reason(req->response);

		diag_add(dsink, SEVERITY_ERROR, PATH, mapping_hint(engine, reason),
				 "the cluster does not accept the mapping of the index: %s%s%s",
				 http_failure(req), reason ? ": " : "", reason ? reason : "");
		return;
	}
	if (!os_succeeded(req = os_delete_index(server, probe), 404))
		diag_add(dsink, SEVERITY_WARNING, PATH, "Delete it by hand.",
				 "the index \"%s\" created to try the mapping could not be deleted: %s",
				 probe, http_failure(req));
}

/* What the catalog says of the sink: in conflict, stopped, documents rejected. */
static void
check_shipping(DiagnosticSink *dsink, const StoredIndex *index)
{
	CatalogUser saved;
	ShippingRow row;
	char	   *stopped;
	int64		rejected;

	catalog_become_owner(&saved);
	if (!catalog_shipping_row(index->name, &row))
		elog(ERROR, "could not read the OpenSearch sink of index \"%s\"", index->name);
	catalog_restore_user(&saved);
	stopped = row.stopped;
	rejected = row.rejected;
	if (row.conflict)
		diag_add(dsink, SEVERITY_ERROR, PATH,
				 psprintf("ALTER SERVER ... OPTIONS (SET index_prefix '...'), or SELECT flusso_adopt('%s');",
						  index->name),
				 "%s", row.conflict);
	if (stopped)
		diag_add(dsink, SEVERITY_ERROR, PATH,
				 psprintf("Fix the rows or the definition, then run SELECT flusso_retry_rejected('%s');", index->name),
				 "%s", stopped);
	else if (rejected > 0)
		diag_add(dsink, SEVERITY_WARNING, PATH,
				 psprintf("SELECT * FROM flusso_rejected('%s') says why; fix the rows, then run SELECT flusso_retry_rejected('%s');",
						  index->name, index->name),
				 "OpenSearch rejected " INT64_FORMAT " documents of the index", rejected);
}

void
check_opensearch(DiagnosticSink *dsink, const StoredIndex *index)
{
	IndexSink  *sink = sink_for_index(index->name, index->owner, NULL);
	char	   *owner = GetUserNameFromId(index->owner, false);
	OpenSearchServer *server;
	const char *engine;

	if (sink->server == NULL)
		return;
	server = os_server_load(sink->server, index->owner, true);
	if (server == NULL)
	{
		diag_add(dsink, SEVERITY_ERROR, PATH,
				 "Create it (CREATE SERVER ... FOREIGN DATA WRAPPER flusso_opensearch), or choose other sinks with flusso_set_sinks().",
				 "server \"%s\" does not exist, or is not a flusso_opensearch server", sink->server);
		return;
	}
	if (!os_server_usable_by(sink->server, index->owner))
	{
		diag_add(dsink, SEVERITY_ERROR, PATH,
				 psprintf("GRANT USAGE ON FOREIGN SERVER %s TO %s;", quote_identifier(sink->server),
						  quote_identifier(owner)),
				 "role \"%s\", the index's owner, may not use server \"%s\"", owner, sink->server);
		return;
	}
	if (os_prefix_problem(server->index_prefix))
		diag_add(dsink, SEVERITY_WARNING, PATH,
				 psprintf("Give the server a prefix that does, ALTER SERVER %s OPTIONS (SET index_prefix '...'); the next seed, SELECT flusso_resnapshot('%s'), names the index with it.",
						  quote_identifier(sink->server), index->name),
				 "the index_prefix \"%s\" of server \"%s\" does not end with '-' or '.', so another server's prefix and index can make the same alias name",
				 server->index_prefix, sink->server);
	if (!has_privs_of_role(GetUserId(), index->owner))
	{
		/* the owner's credentials are the owner's to spend */
		diag_add(dsink, SEVERITY_INFO, PATH,
				 psprintf("Role \"%s\", or a role with its privileges, tries them with flusso_check().", owner),
				 "the cluster and the mapping were not tried: requests would carry the credentials of role \"%s\", the index's owner",
				 owner);
	}
	else
	{
		if (server->aws_region && server->aws_access_key_id == NULL)
			diag_add(dsink, SEVERITY_WARNING, PATH,
					 "Add aws_access_key_id and aws_secret_access_key to the user mapping.",
					 "server \"%s\" signs requests for AWS, but role \"%s\" has no AWS keys in its user mapping: requests go unsigned",
					 sink->server, owner);
		check_nodes(dsink, server);
		engine = check_reachable(dsink, server, owner);
		if (engine)
			check_mapping(dsink, server, index, engine);
	}
	check_shipping(dsink, index);
}

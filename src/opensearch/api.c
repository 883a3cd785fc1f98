/*-------------------------------------------------------------------------
 *
 * api.c
 *	  The OpenSearch REST calls flusso makes besides _bulk: an index
 *	  created, configured, refreshed and deleted, an alias read and moved
 *	  atomically, documents read a page at a time in _id order.  Each
 *	  call runs to its end (http_run) and hands back the request.
 *
 * Only a page of documents with their _source may be long: every other
 * answer is read up to SMALL_RESPONSE, so a server that answers with more
 * costs the process little memory.
 *
 * Index names are flusso's own (a prefix of the server's options, an
 * index name, a generation), made of characters that need no escaping in
 * a URL; document ids only ever travel in bodies, JSON-escaped.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/json.h"

#include "opensearch/api.h"
#include "opensearch/json.h"

/* what an answer other than a page of documents may hold */
#define SMALL_RESPONSE ((size_t) 1024 * 1024)
/* what a page of ids, without their documents, may hold */
#define IDS_RESPONSE ((size_t) 16 * 1024 * 1024)
/* how long a scroll is kept between two of its pages */
#define SCROLL_KEEP_ALIVE "5m"

/* body, with value (JSON text) set at the path of two keys a and b */
static Datum
set_at(Datum body, const char *a, const char *b, const char *value)
{
	Datum		path[2] = {CStringGetTextDatum(a), CStringGetTextDatum(b)};

	return DirectFunctionCall4(jsonb_set, body,
							   PointerGetDatum(construct_array(path, 2, TEXTOID, -1, false, TYPALIGN_INT)),
							   DirectFunctionCall1(jsonb_in, CStringGetDatum(value)),
							   BoolGetDatum(true));
}

/*
 * The body that creates an index: the mapping (flusso_mapping(): its
 * mappings and analysis settings) with settings.index set to these shards,
 * replicas and refresh interval, and, unless owner is NULL, the owner
 * record (a JSON object) as mappings._meta.flusso.
 */
char *
os_index_body(const char *mapping, int shards, int replicas, const char *refresh,
			  const char *owner)
{
	StringInfoData index;
	Datum		body;

	initStringInfo(&index);
	appendStringInfo(&index, "{\"number_of_shards\": %d, \"number_of_replicas\": %d, \"refresh_interval\": ",
					 shards, replicas);
	escape_json(&index, refresh);
	appendStringInfoChar(&index, '}');
	body = set_at(DirectFunctionCall1(jsonb_in, CStringGetDatum(mapping)),
				  "settings", "index", index.data);
	if (owner)
		body = set_at(body, "mappings", "_meta", psprintf("{\"flusso\": %s}", owner));
	return DatumGetCString(DirectFunctionCall1(jsonb_out, body));
}

static HttpRequest *
call_reading(const OpenSearchServer *server, const char *method, const char *path,
			 const char *body, size_t response_limit)
{
	HttpRequest *req = http_request(server, method, path, body, body ? strlen(body) : 0);

	req->response_limit = response_limit;
	http_run(req);
	return req;
}

static HttpRequest *
call(const OpenSearchServer *server, const char *method, const char *path, const char *body)
{
	return call_reading(server, method, path, body, SMALL_RESPONSE);
}

bool
os_succeeded(const HttpRequest *req, long also_ok)
{
	return (req->status >= 200 && req->status < 300) || (also_ok && req->status == also_ok);
}

/* GET /: is the cluster there, and does it take our credentials? */
HttpRequest *
os_cluster_info(const OpenSearchServer *server)
{
	return call(server, "GET", "/", NULL);
}

HttpRequest *
os_create_index(const OpenSearchServer *server, const char *index, const char *body)
{
	return call(server, "PUT", psprintf("/%s", index), body);
}

HttpRequest *
os_delete_index(const OpenSearchServer *server, const char *index)
{
	return call(server, "DELETE", psprintf("/%s", index), NULL);
}

HttpRequest *
os_put_settings(const OpenSearchServer *server, const char *index, const char *settings)
{
	return call(server, "PUT", psprintf("/%s/_settings", index), settings);
}

HttpRequest *
os_refresh(const OpenSearchServer *server, const char *index)
{
	return call(server, "POST", psprintf("/%s/_refresh", index), NULL);
}

/*
 * The indexes alias points to now (GET /_alias/<alias>: an object keyed
 * by index name); NIL when none, or when the request failed (*req says).
 */
List *
os_alias_holders(const OpenSearchServer *server, const char *alias, HttpRequest **req)
{
	Jsonb	   *doc;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken token;
	List	   *holders = NIL;
	int			depth = 0;

	*req = call(server, "GET", psprintf("/_alias/%s", alias), NULL);
	if (!os_succeeded(*req, 0) || (doc = os_json_parse((*req)->response)) == NULL)
		return NIL;
	it = JsonbIteratorInit(&doc->root);
	while ((token = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (token == WJB_BEGIN_OBJECT)
			depth++;
		else if (token == WJB_END_OBJECT)
			depth--;
		else if (token == WJB_KEY && depth == 1)
			holders = lappend(holders, pnstrdup(v.val.string.val, v.val.string.len));
	}
	return holders;
}

/* The owner record in the mappings of an index, an object or NULL. */
static OwnerRecord *
owner_record(JsonbContainer *mappings, const char *index)
{
	JsonbContainer *record = os_json_object(os_json_object(mappings, "_meta"), "flusso");
	OwnerRecord *owner = palloc0(sizeof(OwnerRecord));

	owner->index = pstrdup(index);
	if (record == NULL)
		return owner;
	owner->source = os_json_text(record, "source");
	owner->database = os_json_text(record, "database");
	owner->database_oid = os_json_text(record, "database_oid");
	owner->system_identifier = os_json_text(record, "system_identifier");
	return owner;
}

/*
 * The "dynamic" setting of index's mappings ("strict" for every index
 * flusso creates, none for one a _bulk created by itself), or NULL; *req
 * says whether the index exists (404: it does not) or the request failed.
 */
char *
os_index_dynamic(const OpenSearchServer *server, const char *index, HttpRequest **req)
{
	Jsonb	   *doc;

	*req = call(server, "GET", psprintf("/%s/_mapping?filter_path=*.mappings.dynamic", index), NULL);
	if (!os_succeeded(*req, 0) || (doc = os_json_parse((*req)->response)) == NULL)
		return NULL;
	return os_json_text(os_json_object(os_json_object(&doc->root, index), "mappings"), "dynamic");
}

/*
 * The owner records of indexes (a List of names, which exist), in their
 * order: one without a record has a NULL source.  NIL when the request
 * failed (*req says).
 */
List *
os_index_owners(const OpenSearchServer *server, List *indexes, HttpRequest **req)
{
	StringInfoData names;
	Jsonb	   *doc;
	List	   *owners = NIL;
	ListCell   *lc;

	initStringInfo(&names);
	foreach(lc, indexes)
		appendStringInfo(&names, "%s%s", names.len > 0 ? "," : "", (char *) lfirst(lc));
	*req = call(server, "GET",
				psprintf("/%s/_mapping?filter_path=*.mappings._meta.flusso", names.data), NULL);
	if (!os_succeeded(*req, 0) || (doc = os_json_parse((*req)->response)) == NULL)
		return NIL;
	foreach(lc, indexes)
	{
		const char *index = lfirst(lc);

		owners = lappend(owners,
						 owner_record(os_json_object(os_json_object(&doc->root, index), "mappings"),
									  index));
	}
	return owners;
}

/*
 * Put on index the mappings of mapping (a body as flusso_mapping() gives
 * it): OpenSearch adds the fields index lacks, keeps those it has alike,
 * refuses one it maps otherwise, and leaves _meta alone.
 */
HttpRequest *
os_put_mappings(const OpenSearchServer *server, const char *index, const char *mapping)
{
	Datum		body = DirectFunctionCall1(jsonb_in, CStringGetDatum(mapping));
	Datum		mappings = DirectFunctionCall2(jsonb_object_field, body,
											   CStringGetTextDatum("mappings"));

	return call(server, "PUT", psprintf("/%s/_mapping", index),
				DatumGetCString(DirectFunctionCall1(jsonb_out, mappings)));
}

/* Record owner (a JSON object) as the _meta.flusso of index. */
HttpRequest *
os_put_owner(const OpenSearchServer *server, const char *index, const char *owner)
{
	return call(server, "PUT", psprintf("/%s/_mapping", index),
				psprintf("{\"_meta\": {\"flusso\": %s}}", owner));
}

/*
 * Point alias at index to, and at nothing else, in one request: readers
 * see the old index or the new one, never neither.
 */
HttpRequest *
os_move_alias(const OpenSearchServer *server, const char *alias, List *from, const char *to)
{
	StringInfoData body;
	ListCell   *lc;

	initStringInfo(&body);
	appendStringInfoString(&body, "{\"actions\": [");
	foreach(lc, from)
	{
		appendStringInfoString(&body, "{\"remove\": {\"index\": ");
		escape_json(&body, lfirst(lc));
		appendStringInfoString(&body, ", \"alias\": ");
		escape_json(&body, alias);
		appendStringInfoString(&body, "}}, ");
	}
	appendStringInfoString(&body, "{\"add\": {\"index\": ");
	escape_json(&body, to);
	appendStringInfoString(&body, ", \"alias\": ");
	escape_json(&body, alias);
	appendStringInfoString(&body, "}}]}");
	return call(server, "POST", "/_aliases", body.data);
}

/*
 * A page of index's documents, read with the scroll API, which both
 * engines take alike (Elasticsearch 8 and later refuse to sort on _id):
 * the first page when scroll_id is NULL, else the next page of that
 * scroll.  Each answer's _scroll_id names the scroll to go
 * on with; a scroll unused for SCROLL_KEEP_ALIVE is gone (404), and
 * os_scroll_clear frees one sooner.  With the sources, their versions
 * too (flusso_verify() repairs above them).
 */
HttpRequest *
os_scroll_page(const OpenSearchServer *server, const char *index, const char *scroll_id,
			   int size, bool source)
{
	StringInfoData body;

	initStringInfo(&body);
	if (scroll_id == NULL)
	{
		appendStringInfo(&body, "{\"size\": %d, \"sort\": [\"_doc\"], \"_source\": %s, "
						 "\"version\": %s, \"query\": {\"match_all\": {}}}", size,
						 source ? "true" : "false", source ? "true" : "false");
		return call_reading(server, "POST",
							psprintf("/%s/_search?scroll=%s", index, SCROLL_KEEP_ALIVE),
							body.data, source ? HTTP_RESPONSE_LIMIT : IDS_RESPONSE);
	}
	appendStringInfoString(&body, "{\"scroll\": \"" SCROLL_KEEP_ALIVE "\", \"scroll_id\": ");
	escape_json(&body, scroll_id);
	appendStringInfoChar(&body, '}');
	return call_reading(server, "POST", "/_search/scroll", body.data,
						source ? HTTP_RESPONSE_LIMIT : IDS_RESPONSE);
}

/* Free a scroll before its keep-alive ends; what the cluster answers does not matter. */
void
os_scroll_clear(const OpenSearchServer *server, const char *scroll_id)
{
	StringInfoData body;

	if (scroll_id == NULL)
		return;
	initStringInfo(&body);
	appendStringInfoString(&body, "{\"scroll_id\": [");
	escape_json(&body, scroll_id);
	appendStringInfoString(&body, "]}");
	http_release(call(server, "DELETE", "/_search/scroll", body.data));
}

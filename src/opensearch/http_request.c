/*-------------------------------------------------------------------------
 *
 * http_request.c
 *	  Making a request to an OpenSearch or Elasticsearch cluster (a libcurl
 *	  handle, ready to be run by http.c), and saying what went wrong with
 *	  one.
 *
 * Every request has a connect timeout, a total timeout and a low-speed
 * limit (less than a byte a second for 30 seconds aborts it), verifies
 * TLS unless the server says tls_verify 'false', and authenticates as the
 * user mapping says: basic authentication, AWS SigV4 signing, an API key
 * (Authorization: ApiKey) or a bearer token (Authorization: Bearer).  Its
 * response is read into a malloc'd buffer by libcurl's callbacks, which
 * never palloc or ereport, up to the request's response_limit.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <curl/curl.h>

#include "utils/builtins.h"
#include "utils/memutils.h"

#include "opensearch/http.h"
#include "opensearch/json.h"
#include "opensearch/nodes.h"

/* a request that moves less than a byte a second for this long is aborted */
#define LOW_SPEED_SECONDS 30

/* libcurl's callbacks: no palloc, no ereport */

static size_t
on_data(char *data, size_t size, size_t nmemb, void *arg)
{
	HttpRequest *req = arg;
	size_t		n = size * nmemb;
	char	   *grown;

	if (req->response_len + n > req->response_limit)
	{
		req->too_large = true;
		return 0;
	}
	grown = realloc(req->response, req->response_len + n + 1);
	if (grown == NULL)
	{
		req->out_of_memory = true;
		return 0;
	}
	memcpy(grown + req->response_len, data, n);
	req->response = grown;
	req->response_len += n;
	req->response[req->response_len] = '\0';
	return n;
}

static size_t
on_header(char *line, size_t size, size_t nmemb, void *arg)
{
	HttpRequest *req = arg;
	size_t		n = size * nmemb;

	if (n > 12 && pg_strncasecmp(line, "Retry-After:", 12) == 0)
	{
		const char *p = line + 12;
		int			seconds = 0;
		bool		digits = false;

		while (p < line + n && (*p == ' ' || *p == '\t'))
			p++;
		while (p < line + n && *p >= '0' && *p <= '9' && seconds < 86400)
		{
			seconds = seconds * 10 + (*p++ - '0');
			digits = true;
		}
		/* an HTTP date is not followed: backing off covers it */
		if (digits)
			req->retry_after = seconds;
	}
	return n;
}

static void
set(CURL *easy, CURLoption option, const void *value)
{
	if (curl_easy_setopt(easy, option, value) != CURLE_OK)
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("libcurl refused an option (%d)", (int) option)));
}

static void
set_long(CURL *easy, CURLoption option, long value)
{
	if (curl_easy_setopt(easy, option, value) != CURLE_OK)
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("libcurl refused an option (%d)", (int) option)));
}

static struct curl_slist *
add_header(struct curl_slist *headers, const char *header)
{
	struct curl_slist *grown = curl_slist_append(headers, header);

	if (grown == NULL)
	{
		curl_slist_free_all(headers);
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	}
	return grown;
}

/*
 * Send req to node (a base URL of its server): where it goes first, and
 * where http.c sends it again when its node could not be reached.
 */
void
http_request_set_node(HttpRequest *req, const char *node)
{
	req->node = node;
	set(req->easy, CURLOPT_URL,
		psprintf("%s%s%s", node, req->path, req->query ? req->query : ""));
}

/*
 * A request, ready to be run or added to a pool, in the current context,
 * to node, or to the node of the server's cluster whose turn it is
 * (opensearch/nodes.c); its body (JSON, or NDJSON for a _bulk) must
 * outlive it.
 */
static HttpRequest *
make_request(const OpenSearchServer *server, const char *node, const char *method,
			 const char *path, const char *query, const char *body, size_t body_len,
			 bool ndjson)
{
	HttpRequest *req = palloc0(sizeof(HttpRequest));
	const OpenSearchServer *s = server;
	struct curl_slist *headers = NULL;
	CURL	   *easy;

	http_init_process();
	req->server = server;
	req->method = method;
	req->path = pstrdup(path);
	req->query = query ? pstrdup(query) : NULL;
	req->attempts = 1;
	req->body = body;
	req->body_len = body_len;
	req->ndjson = ndjson;
	req->response_limit = HTTP_RESPONSE_LIMIT;
	req->retry_after = -1;
	req->context = CurrentMemoryContext;

	easy = curl_easy_init();
	if (easy == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("could not create a libcurl handle")));
	req->easy = easy;
	if (node == NULL && (node = os_node_pick(server, NULL)) == NULL)
	{
		/* its URL is never used: the request ends unsent (http.c) */
		node = server->nodes[0];
		req->unsendable = true;
		snprintf(req->error, sizeof(req->error),
				 "no node of OpenSearch server \"%s\" is known to belong to the cluster its other nodes form",
				 server->name);
	}
	http_request_set_node(req, node);
	set_long(easy, CURLOPT_NOSIGNAL, 1L);
	set(easy, CURLOPT_PROTOCOLS_STR, "http,https");
	set_long(easy, CURLOPT_FOLLOWLOCATION, 0L);
	set(easy, CURLOPT_ERRORBUFFER, req->error);
	set(easy, CURLOPT_PRIVATE, req);
	set(easy, CURLOPT_WRITEFUNCTION, on_data);
	set(easy, CURLOPT_WRITEDATA, req);
	set(easy, CURLOPT_HEADERFUNCTION, on_header);
	set(easy, CURLOPT_HEADERDATA, req);
	set(easy, CURLOPT_ACCEPT_ENCODING, "");
	set_long(easy, CURLOPT_TCP_KEEPALIVE, 1L);
	set_long(easy, CURLOPT_CONNECTTIMEOUT, (long) s->connect_timeout);
	set_long(easy, CURLOPT_TIMEOUT, (long) s->request_timeout);
	set_long(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
	set_long(easy, CURLOPT_LOW_SPEED_TIME, (long) Min(LOW_SPEED_SECONDS, s->request_timeout));

	if (strcmp(method, "HEAD") == 0)
		set_long(easy, CURLOPT_NOBODY, 1L);
	else
		set(easy, CURLOPT_CUSTOMREQUEST, method);
	if (body)
	{
		set(easy, CURLOPT_POSTFIELDS, body);
		if (curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) body_len) != CURLE_OK)
			ereport(ERROR, (errcode(ERRCODE_SYSTEM_ERROR), errmsg("libcurl refused a body size")));
	}

	/* TLS: verified unless the server says otherwise */
	set_long(easy, CURLOPT_SSL_VERIFYPEER, s->tls_verify ? 1L : 0L);
	set_long(easy, CURLOPT_SSL_VERIFYHOST, s->tls_verify ? 2L : 0L);
	if (s->ca_file)
		set(easy, CURLOPT_CAINFO, s->ca_file);
	if (s->client_cert)
		set(easy, CURLOPT_SSLCERT, s->client_cert);
	if (s->client_key)
		set(easy, CURLOPT_SSLKEY, s->client_key);

	/* credentials: AWS SigV4 when the server has a region, else the user mapping's one way */
	if (s->aws_region && s->aws_access_key_id)
	{
		set(easy, CURLOPT_AWS_SIGV4, psprintf("aws:amz:%s:%s", s->aws_region, s->aws_service));
		set(easy, CURLOPT_USERNAME, s->aws_access_key_id);
		set(easy, CURLOPT_PASSWORD, s->aws_secret_access_key);
		if (s->aws_session_token)
			headers = add_header(headers, psprintf("x-amz-security-token: %s", s->aws_session_token));
	}
	else if (s->user)
	{
		set_long(easy, CURLOPT_HTTPAUTH, (long) CURLAUTH_BASIC);
		set(easy, CURLOPT_USERNAME, s->user);
		set(easy, CURLOPT_PASSWORD, s->password);
	}
	else if (s->api_key)
		headers = add_header(headers, psprintf("Authorization: ApiKey %s", s->api_key));
	else if (s->bearer_token)
		headers = add_header(headers, psprintf("Authorization: Bearer %s", s->bearer_token));

	if (body)
		headers = add_header(headers, ndjson ? "Content-Type: application/x-ndjson"
							 : "Content-Type: application/json");
	/* no "Expect: 100-continue" round trip before a large body */
	headers = add_header(headers, "Expect:");
	req->headers = headers;
	set(easy, CURLOPT_HTTPHEADER, headers);
	return req;
}

HttpRequest *
http_request(const OpenSearchServer *server, const char *method, const char *path,
			 const char *body, size_t body_len)
{
	return make_request(server, NULL, method, path, NULL, body, body_len, false);
}

/*
 * A request without a body to one node of the server's cluster, which
 * goes nowhere else (flusso_check() asks each node).
 */
HttpRequest *
http_request_to_node(const OpenSearchServer *server, const char *node, const char *method,
					 const char *path)
{
	HttpRequest *req = make_request(server, node, method, path, NULL, NULL, 0, false);

	req->attempts = server->nnodes;
	return req;
}

/*
 * A _bulk of body; its response is read up to a bound proportional to the
 * body, since it only says what became of each item.  The cluster is asked
 * for no more of each item than bulk_read_response() reads (filter_path):
 * an item that went through is 24 bytes instead of some 170 to write,
 * send and parse.  Messages name the
 * request /_bulk.
 */
HttpRequest *
http_bulk_request(const OpenSearchServer *server, const char *body, size_t body_len)
{
	HttpRequest *req = make_request(server, NULL, "POST", "/_bulk",
									"?filter_path=items.*.status,items.*.error.type,items.*.error.reason",
									body, body_len, true);

	req->response_limit = HTTP_BULK_RESPONSE_BASE + HTTP_BULK_RESPONSE_PER_BYTE * body_len;
	return req;
}

/*
 * What went wrong, for flusso_status() and errors any flusso_admin member
 * may read: the server, the request, the status and OpenSearch's error
 * type, never its reason, which may quote a document's values.
 */
char *
http_failure(const HttpRequest *req)
{
	char	   *type;

	if (req->too_large)
		return psprintf("OpenSearch server \"%s\" answered %s %s with more than %zu bytes",
						req->server->name, req->method, req->path, req->response_limit);
	if (req->status == 0 && req->server->nnodes > 1)
		return psprintf("could not reach OpenSearch server \"%s\" (%s %s, %d nodes tried, the last %s): %s",
						req->server->name, req->method, req->path, req->attempts, req->node,
						req->error);
	if (req->status == 0)
		return psprintf("could not reach OpenSearch server \"%s\" (%s %s): %s",
						req->server->name, req->method, req->path, req->error);
	type = os_json_error_type(req->response);
	return psprintf("OpenSearch server \"%s\" answered %s %s with HTTP %ld%s%s",
					req->server->name, req->method, req->path, req->status,
					type ? ": " : "", type ? type : "");
}

/*-------------------------------------------------------------------------
 *
 * http.h
 *	  Requests to an OpenSearch cluster over libcurl's multi interface,
 *	  waited for together with the process latch, so that a backend or the
 *	  shipper answers cancels, SIGTERM and reloads while a request hangs.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_OPENSEARCH_HTTP_H
#define FLUSSO_OPENSEARCH_HTTP_H

#include "lib/stringinfo.h"
#include "opensearch/server.h"

typedef struct HttpPool HttpPool;

/* what a response may hold at most, unless the request says less */
#define HTTP_RESPONSE_LIMIT ((size_t) 256 * 1024 * 1024)

/*
 * What the response of a _bulk may hold: one result per item, each a few
 * hundred bytes at most beyond what the item itself quotes of its
 * request (index and id), so a few times the request, and some room.
 */
#define HTTP_BULK_RESPONSE_BASE ((size_t) 1024 * 1024)
#define HTTP_BULK_RESPONSE_PER_BYTE 8

typedef struct HttpRequest
{
	const OpenSearchServer *server;
	const char *node;			/* the base URL of the node it goes to */
	const char *method;			/* GET, PUT, POST, DELETE, HEAD */
	char	   *path;			/* appended to the node's URL: "/..." */
	char	   *query;			/* and then this, or NULL */
	const char *body;			/* NULL: none */
	size_t		body_len;
	bool		ndjson;			/* body is NDJSON (a _bulk), else JSON */
	size_t		response_limit; /* a longer response aborts the request */
	void	   *owner;			/* the caller's, untouched */
	MemoryContext context;		/* where it was made: its response goes there */

	/* the outcome, once done */
	bool		done;
	long		status;			/* 0: no HTTP response */
	char	   *response;		/* NUL-terminated; malloc'd, see http_release */
	size_t		response_len;
	int			retry_after;	/* seconds a 429 or 503 asked for, or -1 */
	char		error[256];		/* why there was no response */
	int			attempts;		/* nodes it was sent to */
	char		failed_over[256];	/* a node it could not reach, and why,
									 * when another one answered: "" */

	/* libcurl's */
	void	   *easy;
	void	   *headers;
	bool		out_of_memory;
	bool		too_large;		/* the response passed response_limit */
	bool		unsendable;		/* no node of its server may be sent it: it
								 * ends at once, error saying why */
} HttpRequest;

extern void http_init_process(void);

extern HttpRequest *http_request(const OpenSearchServer *server, const char *method,
								 const char *path, const char *body, size_t body_len);
extern HttpRequest *http_bulk_request(const OpenSearchServer *server, const char *body,
									  size_t body_len);
extern HttpRequest *http_request_to_node(const OpenSearchServer *server, const char *node,
										 const char *method, const char *path);
extern void http_request_set_node(HttpRequest *req, const char *node);
extern void http_release(HttpRequest *req);

/*
 * One request, run to its end: cancel and die are answered while it
 * runs, and http_wait_callback, when set, after every wait (the shipper
 * answers reloads there).
 */
extern void http_run(HttpRequest *req);

/*
 * The same in two steps, for a caller with work to do while the server
 * works: http_start returns once the request is sent (or ended), and
 * http_finish waits for its end; http_finish_or_latch also returns when
 * the process's latch was set, true when the request ended.  All answer
 * interrupts as http_run.
 */
extern void http_start(HttpRequest *req);
extern void http_finish(HttpRequest *req);
extern bool http_finish_or_latch(HttpRequest *req);
extern void (*http_wait_callback) (void);

/* many requests in flight (the shipper) */
extern HttpPool *http_pool_create(void);
extern void http_pool_add(HttpPool *pool, HttpRequest *req);
extern bool http_pool_wait(HttpPool *pool, long timeout_ms);
extern HttpRequest *http_pool_next_done(HttpPool *pool);
extern void http_pool_abandon(HttpPool *pool);

/* stop whatever the process has in flight (after an error) */
extern void http_abandon_all(void);

/* what went wrong with a request that did not succeed, in words */
extern char *http_failure(const HttpRequest *req);

#endif							/* FLUSSO_OPENSEARCH_HTTP_H */

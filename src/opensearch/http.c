/*-------------------------------------------------------------------------
 *
 * http.c
 *	  Running requests to an OpenSearch cluster with libcurl's multi
 *	  interface: one at a time, or several in flight (the shipper).
 *
 * libcurl is initialized in the process that first sends a request (a
 * backend, the shipper), never in the postmaster, and its state is the
 * process's own.  Signals are not libcurl's business (CURLOPT_NOSIGNAL):
 * the process waits on its latch and on libcurl's sockets together, so
 * that a cancel, SIGTERM or a reload is answered within a second even
 * while a request hangs.  libcurl's callbacks only copy bytes into
 * malloc'd buffers: they never palloc or ereport, which could longjmp out
 * of libcurl.  A request's response is copied into the memory context the
 * request was made in once it is done.  Making a request is
 * http_request.c's.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <curl/curl.h>

#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "compat.h"
#include "opensearch/http.h"
#include "opensearch/nodes.h"

typedef struct SocketWatch
{
	curl_socket_t fd;
	int			what;			/* CURL_POLL_IN, _OUT, _INOUT */
} SocketWatch;

struct HttpPool
{
	CURLM	   *multi;
	List	   *requests;		/* in flight, in TopMemoryContext */
	SocketWatch *sockets;		/* malloc'd: grown inside a callback */
	int			nsockets;
	int			capacity;
	long		timer_ms;		/* libcurl's next timeout, -1: none */
	int			in_flight;		/* requests, unsent ones included */
	List	   *unsent;			/* unsendable: they end at the next look */
};

static bool curl_ready = false;
static HttpPool *process_pool = NULL;

void		(*http_wait_callback) (void) = NULL;

/* Initialize libcurl for this process, once. */
void
http_init_process(void)
{
	if (curl_ready)
		return;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("could not initialize libcurl")));
	curl_ready = true;
}

/* libcurl's multi callbacks: no palloc, no ereport */

static int
on_socket(CURL *easy, curl_socket_t fd, int what, void *arg, void *socket_arg)
{
	HttpPool   *pool = arg;
	int			i;

	for (i = 0; i < pool->nsockets && pool->sockets[i].fd != fd; i++)
		;
	if (what == CURL_POLL_REMOVE)
	{
		if (i < pool->nsockets)
			pool->sockets[i] = pool->sockets[--pool->nsockets];
		return 0;
	}
	if (i == pool->nsockets)
	{
		if (pool->nsockets == pool->capacity)
		{
			int			capacity = Max(8, pool->capacity * 2);
			SocketWatch *grown = realloc(pool->sockets, sizeof(SocketWatch) * capacity);

			if (grown == NULL)
				return -1;
			pool->sockets = grown;
			pool->capacity = capacity;
		}
		pool->sockets[pool->nsockets++].fd = fd;
	}
	pool->sockets[i].what = what;
	return 0;
}

static int
on_timer(CURLM *multi, long timeout_ms, void *arg)
{
	((HttpPool *) arg)->timer_ms = timeout_ms;
	return 0;
}

/* The request's libcurl handle and headers, once it is done or abandoned. */
static void
release_handle(HttpRequest *req)
{
	if (req->easy)
		curl_easy_cleanup(req->easy);
	if (req->headers)
		curl_slist_free_all(req->headers);
	req->easy = NULL;
	req->headers = NULL;
}

/*
 * The response, moved into the request's memory context: requests in
 * flight together end while any one of them is waited for.
 */
static void
finish(HttpRequest *req, CURLcode result)
{
	MemoryContext context = req->context;

	long		status = 0;

	if (result == CURLE_OK)
		curl_easy_getinfo(req->easy, CURLINFO_RESPONSE_CODE, &status);
	else if (req->error[0] == '\0')
		strlcpy(req->error, curl_easy_strerror(result), sizeof(req->error));
	if (req->out_of_memory)
		strlcpy(req->error, "out of memory for the response", sizeof(req->error));
	else if (req->too_large)
		snprintf(req->error, sizeof(req->error), "the response was longer than %zu bytes",
				 req->response_limit);
	req->status = result == CURLE_OK ? status : 0;
	if (req->response)
	{
		char	   *copy = MemoryContextAlloc(context, req->response_len + 1);

		memcpy(copy, req->response, req->response_len + 1);
		free(req->response);
		req->response = copy;
	}
	else
		req->response = MemoryContextAllocZero(context, 1);
	release_handle(req);
	req->done = true;
}

void
http_release(HttpRequest *req)
{
	release_handle(req);
	if (req->response && !req->done)
		free(req->response);
	else if (req->response)
		pfree(req->response);
	req->response = NULL;
}

HttpPool *
http_pool_create(void)
{
	HttpPool   *pool = MemoryContextAllocZero(TopMemoryContext, sizeof(HttpPool));

	http_init_process();
	pool->multi = curl_multi_init();
	if (pool->multi == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("could not create a libcurl multi handle")));
	pool->timer_ms = -1;
	curl_multi_setopt(pool->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(pool->multi, CURLMOPT_SOCKETDATA, pool);
	curl_multi_setopt(pool->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(pool->multi, CURLMOPT_TIMERDATA, pool);
	return pool;
}

/*
 * Start req.  One no node may be sent (req->unsendable) is not started:
 * it ends at the next look at the pool, as if its node could not be
 * reached, so that its caller sees it end as any other.
 */
void
http_pool_add(HttpPool *pool, HttpRequest *req)
{
	MemoryContext old;

	if (!req->unsendable &&
		curl_multi_add_handle(pool->multi, req->easy) != CURLM_OK)
		ereport(ERROR, (errcode(ERRCODE_SYSTEM_ERROR), errmsg("libcurl could not start a request")));
	old = MemoryContextSwitchTo(TopMemoryContext);
	if (req->unsendable)
		pool->unsent = lappend(pool->unsent, req);
	else
		pool->requests = lappend(pool->requests, req);
	MemoryContextSwitchTo(old);
	pool->in_flight++;
}

/*
 * Wait up to timeout_ms for the latch, for libcurl's sockets or its timer,
 * and let libcurl move its requests on.  The latch is reset: the caller
 * looks at what it may have been set for (true when it was).  Exits if
 * the postmaster dies.
 */
bool
http_pool_wait(HttpPool *pool, long timeout_ms)
{
	bool		latched = false;
	WaitEventSet *set;
	WaitEvent  *events;
	int			nevents = pool->nsockets + 2;
	int			fired;
	int			running;
	bool		socket_fired = false;
	long		wait_ms = timeout_ms;

	if (pool->timer_ms >= 0 && pool->timer_ms < wait_ms)
		wait_ms = pool->timer_ms;
	if (pool->unsent != NIL)
		wait_ms = 0;
	set = compat_create_wait_event_set(nevents);
	AddWaitEventToSet(set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
	AddWaitEventToSet(set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
	for (int i = 0; i < pool->nsockets; i++)
	{
		int			what = pool->sockets[i].what;
		uint32		mask = 0;

		if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
			mask |= WL_SOCKET_READABLE;
		if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
			mask |= WL_SOCKET_WRITEABLE;
		if (mask)
			AddWaitEventToSet(set, mask, pool->sockets[i].fd, NULL, NULL);
	}
	events = palloc(sizeof(WaitEvent) * nevents);
	fired = WaitEventSetWait(set, wait_ms, events, nevents, PG_WAIT_EXTENSION);
	FreeWaitEventSet(set);

	for (int i = 0; i < fired; i++)
	{
		if (events[i].events & WL_LATCH_SET)
		{
			ResetLatch(MyLatch);
			latched = true;
		}
		else if (events[i].events & (WL_SOCKET_READABLE | WL_SOCKET_WRITEABLE))
		{
			int			mask = 0;

			if (events[i].events & WL_SOCKET_READABLE)
				mask |= CURL_CSELECT_IN;
			if (events[i].events & WL_SOCKET_WRITEABLE)
				mask |= CURL_CSELECT_OUT;
			curl_multi_socket_action(pool->multi, events[i].fd, mask, &running);
			socket_fired = true;
		}
	}
	pfree(events);
	/* libcurl's timeouts (connecting, retrying, timing out) */
	if (!socket_fired && pool->in_flight > 0)
		curl_multi_socket_action(pool->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	return latched;
}

/*
 * Did a request end without reaching its node (nothing answered)?  Then
 * the node is to blame, not what was asked.
 */
static bool
node_unreachable(CURLcode result)
{
	switch (result)
	{
		case CURLE_COULDNT_RESOLVE_HOST:
		case CURLE_COULDNT_CONNECT:
		case CURLE_OPERATION_TIMEDOUT:
		case CURLE_SEND_ERROR:
		case CURLE_RECV_ERROR:
		case CURLE_GOT_NOTHING:
		case CURLE_SSL_CONNECT_ERROR:
			return true;
		default:
			return false;
	}
}

/*
 * req could not reach its node: set the node aside (opensearch/nodes.c)
 * and, when its server has a node it was not sent to yet, send it there
 * instead, at once.  True when it was sent again.  A request that may have
 * been carried out in part is carried out again: flusso's requests are
 * all idempotent (versioned documents, deletes, an index created or an
 * alias moved that is found so).
 */
static bool
send_elsewhere(HttpPool *pool, HttpRequest *req, CURLcode result)
{
	const char *why = req->error[0] ? req->error : curl_easy_strerror(result);
	const char *other;
	long		aside_ms = os_node_failed(req->server, req->node, why);

	if (req->attempts >= req->server->nnodes ||
		(other = os_node_pick(req->server, req->node)) == NULL)
		return false;
	snprintf(req->failed_over, sizeof(req->failed_over),
			 "node %s did not answer (%s), and is set aside for %ld s",
			 req->node, why, aside_ms / 1000);
	free(req->response);
	req->response = NULL;
	req->response_len = 0;
	req->error[0] = '\0';
	req->retry_after = -1;
	req->out_of_memory = false;
	req->too_large = false;
	req->attempts++;
	http_request_set_node(req, other);
	return curl_multi_add_handle(pool->multi, req->easy) == CURLM_OK;
}

/*
 * A request that finished since the last call, or NULL.  One that could
 * not reach its node is sent to another node of its cluster first, if it
 * has one (send_elsewhere): its caller sees it end once.
 */
HttpRequest *
http_pool_next_done(HttpPool *pool)
{
	CURLMsg    *msg;
	int			left;

	if (pool->unsent != NIL)
	{
		HttpRequest *req = linitial(pool->unsent);

		pool->unsent = list_delete_first(pool->unsent);
		pool->in_flight--;
		finish(req, CURLE_COULDNT_CONNECT);
		return req;
	}
	while ((msg = curl_multi_info_read(pool->multi, &left)) != NULL)
	{
		HttpRequest *req = NULL;
		CURLcode	result = msg->data.result;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **) &req);
		curl_multi_remove_handle(pool->multi, msg->easy_handle);
		if (req->server && node_unreachable(result))
		{
			if (send_elsewhere(pool, req, result))
				continue;
		}
		else if (req->server)
			os_node_answered(req->server, req->node);
		pool->requests = list_delete_ptr(pool->requests, req);
		pool->in_flight--;
		finish(req, result);
		return req;
	}
	return NULL;
}

/* Stop every request in flight (on error, or before exiting). */
void
http_pool_abandon(HttpPool *pool)
{
	ListCell   *lc;

	foreach(lc, pool->requests)
	{
		HttpRequest *req = lfirst(lc);

		curl_multi_remove_handle(pool->multi, req->easy);
		release_handle(req);
		free(req->response);
		req->response = NULL;
	}
	list_free(pool->requests);
	pool->requests = NIL;
	foreach(lc, pool->unsent)
		release_handle((HttpRequest *) lfirst(lc));
	list_free(pool->unsent);
	pool->unsent = NIL;
	pool->in_flight = 0;
}

void
http_abandon_all(void)
{
	if (process_pool != NULL)
		http_pool_abandon(process_pool);
}

/*
 * Move the process's requests on until req has ended or, with sent_only,
 * until all of its body was sent, or with until_latch until the latch was
 * set, answering interrupts: a cancel or a termination stops every
 * request and raises as usual.  True when req ended.
 */
static bool
drive(HttpRequest *req, bool sent_only, bool until_latch)
{
	PG_TRY();
	{
		while (!req->done)
		{
			bool		latched;

			if (sent_only)
			{
				curl_off_t	sent = 0;

				curl_easy_getinfo(req->easy, CURLINFO_SIZE_UPLOAD_T, &sent);
				if ((size_t) sent >= req->body_len)
					break;
			}
			CHECK_FOR_INTERRUPTS();
			latched = http_pool_wait(process_pool, 1000);
			if (http_wait_callback)
				http_wait_callback();
			while (http_pool_next_done(process_pool) != NULL)
				;
			if (latched && until_latch)
				break;
		}
	}
	PG_CATCH();
	{
		http_pool_abandon(process_pool);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return req->done;
}

void
http_start(HttpRequest *req)
{
	if (process_pool == NULL)
		process_pool = http_pool_create();
	http_pool_add(process_pool, req);
	(void) drive(req, true, false);
}

void
http_finish(HttpRequest *req)
{
	(void) drive(req, false, false);
}

bool
http_finish_or_latch(HttpRequest *req)
{
	return drive(req, false, true);
}

/*
 * Run one request to its end.  The process's pool keeps connections open
 * between requests.
 */
void
http_run(HttpRequest *req)
{
	http_start(req);
	http_finish(req);
}

/*-------------------------------------------------------------------------
 *
 * generations.c
 *	  The life of an index's OpenSearch indexes, one step at a time, each
 *	  recorded in flusso.opensearch_generation once OpenSearch did it:
 *
 *	  - a generation being seeded is created, from the index's mapping,
 *		with refresh off and no replicas;
 *	  - after a truncate of the root table, a generation is emptied (each
 *		document deleted at the truncate's version) before anything queued
 *		since is shipped to it;
 *	  - a seeded generation, once every document queued before its seed
 *		ended has been shipped, gets its replicas and refresh interval, is
 *		refreshed, and the alias moves to it from whatever it pointed to,
 *		in one request; the generations before it are retired;
 *	  - a retired generation is deleted (unless kept), then forgotten.
 *
 * A step that fails is tried again after a back-off; every step can be
 * taken twice without harm (a crash between OpenSearch's answer and the
 * catalog's update repeats it).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"

#include "common/xact.h"
#include "opensearch/api.h"
#include "opensearch/bulk.h"
#include "opensearch/json.h"
#include "shipper/shipper.h"

/* documents read and deleted at a time when a generation is emptied */
#define EMPTY_PAGE 1000

/* Record a step in its own transaction: sql about generation $1 (and $2). */
static void
record(const char *sql, int64 generation, int64 arg2)
{
	Oid			types[2] = {INT8OID, INT8OID};
	Datum		values[2] = {Int64GetDatum(generation), Int64GetDatum(arg2)};

	if (!xact_begin(true, NULL, 0))
		return;
	SPI_connect();
	if (SPI_execute_with_args(sql, strstr(sql, "$2") ? 2 : 1, types, values, NULL, false, 0) < 0)
		elog(ERROR, "could not run \"%s\"", sql);
	SPI_finish();
	xact_commit();
}

/* Does g still take documents (not retired)? */
bool
ship_generation_active(const ShipGeneration *g)
{
	return strcmp(g->state, "retired") != 0;
}

/* A step failed: back off, and say why. */
static bool
failed(ShipIndex *x, ShipRuntime *rt, const HttpRequest *req)
{
	ship_failed(rt, x->name, http_failure(req), req->retry_after);
	return false;
}

/* The server of a generation is gone: nothing can be done there. */
static bool
no_server(ShipIndex *x, ShipRuntime *rt, const ShipGeneration *g)
{
	ship_failed(rt, x->name,
				psprintf("OpenSearch index \"%s\" lives on a server that no longer exists or is not a flusso_opensearch server",
						 g->concrete), -1);
	return false;
}

static bool
retire(ShipIndex *x, ShipRuntime *rt, ShipGeneration *g)
{
	if (g->created && !g->keep)
	{
		HttpRequest *req;

		if (g->server == NULL)
		{
			/* nowhere to delete it: forget it, and say so in the log */
			ereport(LOG,
					(errmsg("flusso: OpenSearch index \"%s\" of index \"%s\" is forgotten without being deleted: its server is gone",
							g->concrete, x->name)));
		}
		else if (!os_succeeded(req = os_delete_index(g->server, g->concrete), 404))
			return failed(x, rt, req);
	}
	record("DELETE FROM flusso.opensearch_generation WHERE generation OPERATOR(pg_catalog.=) $1",
		   g->generation, 0);
	return true;
}

static bool
create(ShipIndex *x, ShipRuntime *rt, ShipGeneration *g)
{
	HttpRequest *req;

	if (g->server == NULL)
		return no_server(x, rt, g);
	req = os_create_index(g->server, g->concrete, g->create_body);
	/* a request answered before a crash, repeated */
	if (!os_succeeded(req, 0))
	{
		char	   *type = os_json_error_type(req->response);

		if (req->status != 400 || type == NULL || strcmp(type, "resource_already_exists_exception") != 0)
			return failed(x, rt, req);
	}
	record("UPDATE flusso.opensearch_generation SET created = true, updated_at = pg_catalog.now() "
		   "WHERE generation OPERATOR(pg_catalog.=) $1", g->generation, 0);
	g->created = true;
	return true;
}

/*
 * Delete, at the truncate's version, the ids of one page of documents read
 * after *after; false when the page is empty.  Deletes answered 404 are
 * done; anything else fails the step.
 */
static bool
delete_page(ShipGeneration *g, char **after, HttpRequest **failed_req, bool *ok)
{
	HttpRequest *req = os_page_by_id(g->server, g->concrete, *after, EMPTY_PAGE, false);
	Jsonb	   *doc;
	JsonbContainer *hits;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken token;
	StringInfoData body;
	bool	   *deletes;
	BulkItemResult *results;
	int			n = 0;

	*ok = false;
	*failed_req = req;
	if (!os_succeeded(req, 0) || (doc = os_json_parse(req->response)) == NULL ||
		(hits = os_json_object(os_json_object(&doc->root, "hits"), "hits")) == NULL)
		return false;
	initStringInfo(&body);
	it = JsonbIteratorInit(hits);
	while ((token = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		char	   *id;

		if (token != WJB_ELEM || v.type != jbvBinary ||
			(id = os_json_text(v.val.binary.data, "_id")) == NULL)
			continue;
		bulk_add_delete(&body, g->concrete, id, g->truncate_version);
		*after = id;
		n++;
	}
	if (n == 0)
	{
		*ok = true;
		return false;
	}
	req = http_bulk_request(g->server, body.data, body.len);
	http_run(req);
	*failed_req = req;
	deletes = palloc(sizeof(bool) * n);
	results = palloc0(sizeof(BulkItemResult) * n);
	for (int i = 0; i < n; i++)
		deletes[i] = true;
	if (!os_succeeded(req, 0) || !bulk_read_response(req->response, n, deletes, results))
		return false;
	for (int i = 0; i < n; i++)
	{
		if (results[i].outcome != BULK_DONE)
			return false;
	}
	*ok = true;
	return true;
}

/*
 * The root table was truncated: delete every document of g, each at the
 * truncate's version, a page at a time, before anything queued since is
 * shipped (which carries that version or a later one, so what was
 * inserted after the truncate is never deleted by it).  Plain deletes in
 * _bulk, so any cluster does it (no _delete_by_query, which needs the
 * reindex module).
 */
static bool
empty(ShipIndex *x, ShipRuntime *rt, ShipGeneration *g)
{
	char	   *after = NULL;
	HttpRequest *req;
	bool		ok;

	if (g->server == NULL)
		return no_server(x, rt, g);
	if (!os_succeeded(req = os_refresh(g->server, g->concrete), 0))
		return failed(x, rt, req);
	while (delete_page(g, &after, &req, &ok))
		;
	if (!ok)
		return failed(x, rt, req);
	record("UPDATE flusso.opensearch_generation SET truncate_version = NULL, updated_at = pg_catalog.now() "
		   "WHERE generation OPERATOR(pg_catalog.=) $1 AND truncate_version OPERATOR(pg_catalog.=) $2",
		   g->generation, g->truncate_version);
	g->truncate_version = -1;
	return true;
}

/*
 * Serve g: its settings for serving, a refresh (so that what the alias
 * shows at once is complete), then the alias moved to it in one request.
 */
static bool
serve(ShipIndex *x, ShipRuntime *rt, ShipGeneration *g)
{
	HttpRequest *req;
	List	   *holders;
	ListCell   *lc;

	if (g->server == NULL)
		return no_server(x, rt, g);
	if (!os_succeeded(req = os_put_settings(g->server, g->concrete, g->live_settings), 0) ||
		!os_succeeded(req = os_refresh(g->server, g->concrete), 0))
		return failed(x, rt, req);
	holders = os_alias_holders(g->server, g->alias, &req);
	if (!os_succeeded(req, 404))
		return failed(x, rt, req);
	if (!os_succeeded(req = os_move_alias(g->server, g->alias, holders, g->concrete), 0))
		return failed(x, rt, req);
	record("UPDATE flusso.opensearch_generation SET state = CASE WHEN generation OPERATOR(pg_catalog.=) $1 "
		   "THEN 'served' ELSE 'retired' END, updated_at = pg_catalog.now() "
		   "WHERE index_name OPERATOR(pg_catalog.=) (SELECT index_name FROM flusso.opensearch_generation "
		   "WHERE generation OPERATOR(pg_catalog.=) $1) "
		   "AND (generation OPERATOR(pg_catalog.=) $1 OR state OPERATOR(pg_catalog.=) 'served' "
		   "OR (state OPERATOR(pg_catalog.=) 'seeded' AND generation OPERATOR(pg_catalog.<) $1))",
		   g->generation, 0);
	ereport(LOG,
			(errmsg("flusso: OpenSearch alias \"%s\" of index \"%s\" now serves \"%s\"",
					g->alias, x->name, g->concrete)));
	foreach(lc, x->generations)
	{
		ShipGeneration *other = lfirst(lc);

		if (other != g && (strcmp(other->state, "served") == 0 ||
						   (strcmp(other->state, "seeded") == 0 &&
							other->generation < g->generation)))
			other->state = "retired";
	}
	g->state = "served";
	return true;
}

/*
 * Take the steps the generations of x need now, in order; false when one
 * failed (the turn ends there).  Only the latest seeded generation is
 * served: older ones are retired with the swap.
 */
bool
ship_generations(ShipIndex *x, ShipRuntime *rt)
{
	ShipGeneration *latest_seeded = NULL;
	ListCell   *lc;

	foreach(lc, x->generations)
	{
		ShipGeneration *g = lfirst(lc);

		if (!ship_generation_active(g) && !retire(x, rt, g))
			return false;
	}
	if (!x->live)
		return true;
	foreach(lc, x->generations)
	{
		ShipGeneration *g = lfirst(lc);

		if (!ship_generation_active(g))
			continue;
		if (!g->created && !create(x, rt, g))
			return false;
		if (g->truncate_version >= 0 && !empty(x, rt, g))
			return false;
		if (strcmp(g->state, "seeded") == 0)
			latest_seeded = g;
	}
	if (latest_seeded && latest_seeded->drained && !serve(x, rt, latest_seeded))
		return false;
	return true;
}

/* Has x a generation that takes documents? */
bool
ship_is_ready(ShipIndex *x)
{
	ListCell   *lc;

	foreach(lc, x->generations)
	{
		ShipGeneration *g = lfirst(lc);

		if (ship_generation_active(g) && g->created && x->live)
			return true;
	}
	return false;
}

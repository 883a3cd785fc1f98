/*-------------------------------------------------------------------------
 *
 * generations.c
 *	  The life of an index's OpenSearch indexes, one step at a time, each
 *	  recorded in flusso.opensearch_generation once OpenSearch did it:
 *
 *	  - a generation being seeded is created, from the index's mapping,
 *		with refresh off and no replicas;
 *	  - when the index's definition gained fields in place, each
 *		generation created before is given their mapping ahead of any
 *		document holding them; one that refuses it is left out of the
 *		bulks and the index seeded again;
 *	  - after a truncate of the root table, a generation is emptied (each
 *		document deleted at the truncate's version) before anything queued
 *		since is shipped to it;
 *	  - a seeded generation, once every document queued before its seed
 *		ended has been shipped and none rejected since it was created,
 *		gets its replicas and refresh interval, is refreshed, and the
 *		alias moves to it from whatever it pointed to, in one request; the
 *		generations before it are retired;
 *	  - the served generation is given the index's replicas and refresh
 *		interval again when flusso_set_sinks() changes them, and once
 *		each time the shipper starts;
 *	  - a retired generation is deleted (unless kept), then forgotten;
 *	  - the served generation is checked every SHIP_CHECK_MS against what
 *		OpenSearch holds, since anyone may change it there: an alias
 *		missing or moved is put back on it; an index deleted (or deleted
 *		and created again, with dynamic mappings, by a _bulk) is retired,
 *		and the index seeded again unless a newer generation is coming.
 *
 * Before a step writes into a generation or moves an alias, the indexes
 * it touches are checked to be this database's (the ownership checks,
 * below the first helpers).
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

#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "util/xact.h"
#include "opensearch/api.h"
#include "opensearch/bulk.h"
#include "opensearch/json.h"
#include "shipper/generations.h"
#include "source/source.h"
#include "store/catalog_signal.h"
#include "store/catalog_sink.h"
#include "store/catalog_opensearch_digest.h"
#include "store/catalog_opensearch_generation.h"

/* documents read and deleted at a time when a generation is emptied */
#define EMPTY_PAGE 1000

/* A step failed: why goes into *status, for the loop to back off. */
static bool
failed(ShipStatus *status, const HttpRequest *req)
{
	ship_status_failed(status, http_failure(req), req->retry_after);
	return false;
}

/* The server of a generation is gone: nothing can be done there. */
static bool
no_server(ShipStatus *status, const ShipGeneration *g)
{
	ship_status_failed(status,
					   psprintf("OpenSearch index \"%s\" lives on a server that no longer exists or is not a flusso_opensearch server",
								g->row.concrete), -1);
	return false;
}

/*
 * Whose an OpenSearch index is: the shipper writes only into indexes of
 * this database's, and moves an alias only away from indexes that are its
 * own or nobody's.
 *
 * Every index flusso creates records the identity of its database in its
 * _meta (source/source.c); one made before 0.7.0 records none, and the
 * shipper records it the first time it checks a generation the catalog
 * names.  So:
 *
 *	  - a generation is checked once per shipper before anything is
 *		written into it or deleted from it: another source's is never
 *		touched, and its index stops in conflict;
 *	  - before an alias is moved (a generation served, an alias put back
 *		on the served generation) and before a generation is created, the
 *		indexes the alias serves are looked at: one of another source's
 *		(the database this one was copied from, say), or one with this
 *		database's identity that the catalog does not know (one
 *		flusso_drop_index() kept, or a physical copy of this database's
 *		running elsewhere), stops the index in conflict instead of taking
 *		the alias from it, so that two databases never fight over an alias
 *		and readers never see the other's documents.  An index recording
 *		no owner (made by hand, or by flusso before 0.7.0) is moved away
 *		from, as before.
 *
 * A conflict is recorded in flusso.sink (flusso_status() shows the index
 * in phase error with the reason, flusso_check() too), nothing is shipped
 * for the index meanwhile, and it is looked at again every SHIP_CHECK_MS:
 * it ends once the server has an index_prefix of its own (generations not
 * created yet take the new names) or flusso_adopt() asked that the alias
 * be taken over, from whichever source serves it.
 *
 * Before 0.7.0's catalog there is no identity, and nothing is checked.
 */

/* how long remote names may be in a message */
#define OWNER_TEXT_MAX 64

typedef enum OwnerKind
{
	OWNER_NONE,					/* no record: by hand, or before 0.7.0 */
	OWNER_THIS,					/* this database */
	OWNER_OTHER					/* another source */
} OwnerKind;

/* The generations found this database's since the shipper started. */
static List *verified = NIL;

static OwnerKind
owner_kind(const OwnerRecord *owner)
{
	const SourceIdentity *me = ship_identity(NULL);

	if (owner == NULL || owner->source == NULL)
		return OWNER_NONE;
	return strcmp(owner->source, me->id) == 0 ? OWNER_THIS : OWNER_OTHER;
}

/*
 * A name OpenSearch gave back, fit for a message: at most OWNER_TEXT_MAX
 * bytes, control characters and quotes replaced.
 */
static char *
remote_text(const char *text)
{
	char	   *safe;

	if (text == NULL)
		return pstrdup("?");
	safe = pnstrdup(text, OWNER_TEXT_MAX);
	for (char *c = safe; *c; c++)
	{
		if ((unsigned char) *c < 0x20 || *c == 0x7f || *c == '"' || *c == '\\')
			*c = '?';
	}
	return safe;
}

/* The database an owner record names, in words. */
static char *
describe_owner(const OwnerRecord *owner)
{
	const SourceIdentity *me = ship_identity(NULL);
	char	   *database_oid = psprintf("%u", me->database_oid);

	if (owner->system_identifier && owner->database_oid &&
		strcmp(owner->system_identifier, me->system_identifier) == 0 &&
		strcmp(owner->database_oid, database_oid) == 0)
		return pstrdup("an earlier installation of flusso in this database");
	return source_describe(remote_text(owner->system_identifier),
						   remote_text(owner->database_oid), remote_text(owner->database));
}

static char *
describe_me(void)
{
	const SourceIdentity *me = ship_identity(NULL);

	return source_describe(me->system_identifier, psprintf("%u", me->database_oid),
						   me->database_name);
}

/*
 * x stops in conflict, for message: recorded in flusso.sink (unless it
 * says so already), said in flusso_status(), and looked at again later.
 */
static void
conflict(ShipIndex *x, ShipStatus *status, const char *message)
{
	if (x->conflict == NULL || strcmp(x->conflict, message) != 0)
	{
		ereport(LOG, (errmsg("flusso shipper: index \"%s\": %s", x->name, message)));
		if (xact_begin(true, NULL, 0))
		{
			catalog_set_conflict(x->name, message);
			status->reread = true;
			xact_commit();
		}
	}
	ship_record_error(x->name, message);
	status->conflict = true;
}

/* What a turn of x came to without a conflict: any conflict of x is over. */
static void
conflict_over(ShipIndex *x, ShipStatus *status)
{
	if (x->conflict == NULL)
		return;
	if (xact_begin(true, NULL, 0))
	{
		catalog_set_conflict(x->name, NULL);
		status->reread = true;
		xact_commit();
	}
	ereport(LOG, (errmsg("flusso shipper: index \"%s\": the conflict over its OpenSearch alias is over", x->name)));
	x->conflict = NULL;
}

static bool
is_verified(const char *concrete)
{
	ListCell   *lc;

	foreach(lc, verified)
	{
		if (strcmp(lfirst(lc), concrete) == 0)
			return true;
	}
	return false;
}

static void
remember_verified(const char *concrete)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	verified = lappend(verified, pstrdup(concrete));
	MemoryContextSwitchTo(old);
}

/*
 * Is g's OpenSearch index this database's, to write into (writing) or
 * delete?  Looked at once per shipper: one that records no owner was made
 * before 0.7.0, and is marked this database's now; one that is gone is
 * left to what notices that (the served check, a _bulk).  False when the
 * request failed (*status says), or when the index is another source's
 * (*foreign; and if writing, x is in conflict).
 */
static bool
generation_owned(ShipIndex *x, ShipGeneration *g, bool writing, ShipStatus *status,
					  bool *foreign)
{
	const char *owner_record;
	const SourceIdentity *me = ship_identity(&owner_record);
	HttpRequest *req;
	List	   *owners;
	OwnerRecord *owner;

	*foreign = false;
	if (me->id == NULL || !g->row.created || g->server == NULL || is_verified(g->row.concrete))
		return true;
	owners = os_index_owners(g->server, list_make1(g->row.concrete), &req);
	if (req->status == 404)
		return true;
	if (!os_succeeded(req, 0))
		return failed(status, req);
	owner = linitial(owners);
	switch (owner_kind(owner))
	{
		case OWNER_THIS:
			break;
		case OWNER_NONE:
			if (!os_succeeded(req = os_put_owner(g->server, g->row.concrete, owner_record), 0))
				return failed(status, req);
			ereport(LOG,
					(errmsg("flusso shipper: OpenSearch index \"%s\" of index \"%s\" now records this database as its owner",
							g->row.concrete, x->name)));
			break;
		case OWNER_OTHER:
			*foreign = true;
			if (writing)
				conflict(x, status,
						 psprintf("OpenSearch index \"%s\", a generation of this index in the catalog, is an index of %s: nothing is written into it or deleted from it; call flusso_resnapshot('%s') to seed one of this database's own",
								  g->row.concrete, describe_owner(owner), x->name));
			return false;
	}
	remember_verified(g->row.concrete);
	return true;
}

/* Is index a generation of x in the catalog? */
static bool
known_generation(ShipIndex *x, const char *index)
{
	ListCell   *lc;

	foreach(lc, x->generations)
	{
		if (strcmp(((ShipGeneration *) lfirst(lc))->row.concrete, index) == 0)
			return true;
	}
	return false;
}

/* What the operator may do about a conflict over x's alias on g's server. */
static char *
remedies(ShipIndex *x, ShipGeneration *g)
{
	return psprintf("give server \"%s\" an index_prefix of its own (ALTER SERVER %s OPTIONS (%s index_prefix '...')), or call flusso_adopt('%s') if this database is to take the alias over",
					g->server->name, g->server->name,
					g->server->index_prefix && g->server->index_prefix[0] ? "SET" : "ADD",
					x->name);
}

/*
 * May g's alias move away from holders (the indexes it serves now) to g,
 * now (moving) or once g is seeded?  Generations of x may be moved from,
 * and indexes that record no owner; not, unless flusso_adopt() asked to
 * take the alias over, an index of another source, nor one of this
 * database's identity that the catalog does not know.  False when the
 * turn ends: the request failed (*status says), or x is in conflict.
 */
static bool
alias_may_move(ShipIndex *x, ShipGeneration *g, List *holders, bool moving,
					ShipStatus *status)
{
	const SourceIdentity *me = ship_identity(NULL);
	List	   *unknown = NIL;
	List	   *owners;
	HttpRequest *req;
	ListCell   *lc;

	if (me->id == NULL)
		return true;
	foreach(lc, holders)
	{
		if (!known_generation(x, lfirst(lc)))
			unknown = lappend(unknown, lfirst(lc));
	}
	if (unknown == NIL)
		return true;
	owners = os_index_owners(g->server, unknown, &req);
	if (!os_succeeded(req, 0))
		return failed(status, req);
	foreach(lc, owners)
	{
		OwnerRecord *owner = lfirst(lc);
		OwnerKind	kind = owner_kind(owner);

		if (kind == OWNER_NONE)
			continue;
		if (x->take_alias)
		{
			if (moving)
				ereport(LOG,
						(errmsg("flusso shipper: index \"%s\" takes OpenSearch alias \"%s\" over from \"%s\", an index of %s, as flusso_adopt() asked; that index is left as it is",
								x->name, g->row.alias, owner->index,
								kind == OWNER_THIS ? "this database's identity" : describe_owner(owner))));
			continue;
		}
		if (kind == OWNER_OTHER)
			conflict(x, status,
					 psprintf("OpenSearch alias \"%s\" serves \"%s\", an index of %s, not of this %s: flusso writes only into OpenSearch indexes of its own database, and does not take the alias; %s",
							  g->row.alias, owner->index, describe_owner(owner), describe_me(),
							  remedies(x, g)));
		else
			conflict(x, status,
					 psprintf("OpenSearch alias \"%s\" serves \"%s\", an index made with this database's identity that its catalog does not know: one that flusso_drop_index(keep_opensearch => true) left, or one made by another server running as this database (a restored base backup, a cloned volume, a standby promoted while this one kept running), which must then stop shipping there; %s",
							  g->row.alias, owner->index, remedies(x, g)));
		return false;
	}
	return true;
}

/* The alias of x moved as flusso_adopt() asked: that is done. */
static void
alias_taken(ShipIndex *x, ShipStatus *status)
{
	if (!x->take_alias)
		return;
	if (xact_begin(true, NULL, 0))
	{
		(void) catalog_take_alias(x->name, false);
		status->reread = true;
		xact_commit();
	}
	x->take_alias = false;
}

/*
 * Delete g's OpenSearch index (unless kept), and forget g.  One that is
 * another source's is forgotten without being deleted.
 */
static bool
retire(ShipIndex *x, ShipGeneration *g, ShipStatus *status)
{
	if (g->row.created && !g->row.keep)
	{
		HttpRequest *req;
		bool		foreign;

		if (g->server == NULL)
		{
			/* nowhere to delete it: forget it, and say so in the log */
			ereport(LOG,
					(errmsg("flusso: OpenSearch index \"%s\" of index \"%s\" is forgotten without being deleted: its server is gone",
							g->row.concrete, x->name)));
		}
		else if (!generation_owned(x, g, false, status, &foreign) && !foreign)
			return false;
		else if (foreign)
			ereport(LOG,
					(errmsg("flusso: OpenSearch index \"%s\" of index \"%s\" is forgotten without being deleted: it is another source's",
							g->row.concrete, x->name)));
		else if (!os_succeeded(req = os_delete_index(g->server, g->row.concrete), 404))
			return failed(status, req);
	}
	if (xact_begin(true, NULL, 0))
	{
		generation_forget(g->row.generation);
		status->reread = true;
		xact_commit();
	}
	return true;
}

/*
 * A generation not created yet takes the names its server's index_prefix
 * gives now: the prefix changed since it began (to give a copy of a
 * database names of its own, say).
 */
static void
follow_prefix(ShipIndex *x, ShipGeneration *g, ShipStatus *status)
{
	char	   *alias = psprintf("%s%s", g->server->index_prefix ? g->server->index_prefix : "",
								 x->name);
	char	   *concrete;
	MemoryContext context = GetMemoryChunkContext(g);

	if (strcmp(alias, g->row.alias) == 0 || strncmp(g->row.concrete, g->row.alias, strlen(g->row.alias)) != 0)
		return;
	concrete = psprintf("%s%s", alias, g->row.concrete + strlen(g->row.alias));
	if (!xact_begin(true, NULL, 0))
		return;
	generation_rename(g->row.generation, alias, concrete);
	status->reread = true;
	xact_commit();
	ereport(LOG,
			(errmsg("flusso: OpenSearch index \"%s\" of index \"%s\" is to be created as \"%s\", behind alias \"%s\": the index_prefix of server \"%s\" changed",
					g->row.concrete, x->name, concrete, alias, g->server->name)));
	g->row.alias = MemoryContextStrdup(context, alias);
	g->row.concrete = MemoryContextStrdup(context, concrete);
}

/*
 * Create g's OpenSearch index, recording this database as its owner; not
 * while its alias serves an index this database may not take it from,
 * which would never let it be served.
 */
static bool
create(ShipIndex *x, ShipGeneration *g, ShipStatus *status)
{
	HttpRequest *req;
	List	   *holders;
	bool		foreign;

	if (g->server == NULL)
		return no_server(status, g);
	follow_prefix(x, g, status);
	holders = os_alias_holders(g->server, g->row.alias, &req);
	if (!os_succeeded(req, 404))
		return failed(status, req);
	if (!alias_may_move(x, g, holders, false, status))
		return false;
	req = os_create_index(g->server, g->row.concrete, g->row.create_body);
	/* a request answered before a crash, repeated: the index must be ours */
	if (!os_succeeded(req, 0))
	{
		char	   *type = os_json_error_type(req->response);

		if (req->status != 400)
			return failed(status, req);
		if (type == NULL || strcmp(type, "resource_already_exists_exception") != 0)
		{
			/* the mapping or settings refused: the reason quotes them alone */
			char	   *reason = os_json_error_reason(req->response);

			ship_status_failed(status,
							   psprintf("%s%s%s (flusso_check() tries the mapping)", http_failure(req),
										reason ? ": " : "", reason ? reason : ""),
							   req->retry_after);
			return false;
		}
		g->row.created = true;
		if (!generation_owned(x, g, true, status, &foreign))
		{
			g->row.created = false;
			return false;
		}
	}
	if (xact_begin(true, NULL, 0))
	{
		generation_created(g->row.generation);
		status->reread = true;
		xact_commit();
	}
	g->row.created = true;
	return true;
}

/* Is a generation of x newer than g on its way (seeding or seeded)? */
static bool
newer_on_its_way(const ShipIndex *x, const ShipGeneration *g)
{
	ListCell   *lc;

	foreach(lc, x->generations)
	{
		const ShipGeneration *other = lfirst(lc);

		if (other->row.generation > g->row.generation && ship_generation_active(other))
			return true;
	}
	return false;
}

/*
 * The definition of x gained fields in place: put their mapping on g, which
 * was created before, ahead of any document that holds them (OpenSearch
 * would refuse one under the mapping's dynamic: strict).  Until it takes
 * it, nothing of x is shipped, and flusso_status() says why.  An index that
 * refuses it (it maps one of the fields otherwise, by hand) cannot hold the
 * new documents: the index is seeded again into a new one, and g, which
 * keeps remap set, is left out of the bulks meanwhile (ship.c): the
 * generation served misses changes until it is replaced.  False when the
 * turn of x ends here.
 */
static bool
remap(ShipIndex *x, ShipRuntime *rt, ShipGeneration *g, ShipStatus *status)
{
	HttpRequest *req;
	char	   *reason;
	char	   *message;

	/* refused already: asked once for the seed that replaces it */
	if (rt->remap_refused == g->row.generation)
		return true;
	if (g->server == NULL)
		return no_server(status, g);
	req = os_put_mappings(g->server, g->row.concrete, x->mapping);
	if (os_succeeded(req, 0))
	{
		if (xact_begin(true, NULL, 0))
		{
			generation_remapped(g->row.generation);
			status->reread = true;
			xact_commit();
		}
		g->row.remap = false;
		ereport(LOG,
				(errmsg("flusso: OpenSearch index \"%s\" maps the fields added to index \"%s\"",
						g->row.concrete, x->name)));
		return true;
	}
	reason = os_json_error_reason(req->response);
	message = psprintf("OpenSearch index \"%s\" refused the mapping of the fields added to index \"%s\": %s%s%s",
					   g->row.concrete, x->name, http_failure(req),
					   reason ? ": " : "", reason ? reason : "");
	if (req->status != 400)
	{
		ship_status_failed(status, message, req->retry_after);
		return false;
	}
	/* a seed begun already replaces it (asked for before a restart) */
	if (!newer_on_its_way(x, g))
	{
		if (!xact_begin(true, NULL, 0))
			return false;
		(void) catalog_request(SIGNAL_RESNAPSHOT, x->name, NULL);
		status->reread = true;
		xact_commit();
	}
	rt->remap_refused = g->row.generation;
	message = psprintf("%s; the index is seeded again into a new OpenSearch index, and the one served misses changes until it is replaced",
					   message);
	ereport(WARNING, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					  errmsg("flusso index \"%s\": %s", x->name, message)));
	ship_record_error(x->name, message);
	return true;
}

/*
 * Delete, at the truncate's version, the ids of the next page of the
 * scroll *scroll over g's documents (NULL: a new one, set to the scroll
 * to go on with); false when the page is empty.  Deletes answered 404 are
 * done; anything else fails the step.  A scroll that is gone (kept
 * unused past its keep-alive) is started again: what was deleted is no
 * longer there to be read.
 */
static bool
delete_page(ShipGeneration *g, char **scroll, HttpRequest **failed_req, bool *ok)
{
	HttpRequest *req = os_scroll_page(g->server, g->row.concrete, *scroll, EMPTY_PAGE, false);
	Jsonb	   *doc;
	JsonbContainer *hits;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken token;
	StringInfoData body;
	bool	   *deletes;
	BulkItemResult *results;
	char	   *problem;
	int			n = 0;

	*ok = false;
	if (*scroll && req->status == 404)
	{
		/* gone: read what is left from the start */
		http_release(req);
		if (!os_succeeded(*failed_req = os_refresh(g->server, g->row.concrete), 0))
			return false;
		http_release(*failed_req);
		req = os_scroll_page(g->server, g->row.concrete, NULL, EMPTY_PAGE, false);
	}
	*failed_req = req;
	if (!os_succeeded(req, 0) || (doc = os_json_parse(req->response)) == NULL ||
		(hits = os_json_object(os_json_object(&doc->root, "hits"), "hits")) == NULL ||
		(*scroll = os_json_text(&doc->root, "_scroll_id")) == NULL)
		return false;
	initStringInfo(&body);
	it = JsonbIteratorInit(hits);
	while ((token = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		char	   *id;

		if (token != WJB_ELEM || v.type != jbvBinary ||
			(id = os_json_text(v.val.binary.data, "_id")) == NULL)
			continue;
		bulk_add_delete(&body, g->row.concrete, id, g->row.truncate_version);
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
	if (!os_succeeded(req, 0) || !bulk_read_response(req->response, n, deletes, results, &problem))
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
 * Forget what g holds (ship_digest.c), before its documents are deleted;
 * false when the catalog cannot be read now (the next pass tries again).
 */
static bool
forget_held(const ShipGeneration *g)
{
	if (!xact_begin(true, NULL, 0))
		return false;
	if (digest_in_catalog())
		digest_forget_generation(g->row.generation);
	xact_commit();
	return true;
}

/*
 * The root table was truncated: delete every document of g, each at the
 * truncate's version, a page at a time, before anything queued since is
 * shipped (which carries that version or a later one, so what was
 * inserted after the truncate is never deleted by it).  Plain deletes in
 * _bulk, so any cluster does it (no _delete_by_query, which needs the
 * reindex module).  A large index takes many pages: they are deleted for
 * at most a turn's time, and the next turn goes on with the same scroll,
 * so the other indexes of the database ship in between.  False when a
 * step failed; g->row.truncate_version is -1 once g is empty.
 */
static bool
empty(ShipRuntime *rt, ShipGeneration *g, ShipStatus *status)
{
	TimestampTz turn_ends = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), SHIP_TURN_MS);
	char	   *scroll = NULL;
	HttpRequest *req;
	bool		ok = true;
	bool		more;

	if (g->server == NULL)
		return no_server(status, g);
	/* no digest may say that g holds what is about to be deleted */
	if (rt->emptying != g->row.generation && !forget_held(g))
		return true;
	if (rt->emptying == g->row.generation && rt->emptying_scroll)
		scroll = pstrdup(rt->emptying_scroll);
	if (!os_succeeded(req = os_refresh(g->server, g->row.concrete), 0))
		return failed(status, req);
	while ((more = delete_page(g, &scroll, &req, &ok)) &&
		   GetCurrentTimestamp() < turn_ends)
		;
	if (rt->emptying_scroll)
		pfree(rt->emptying_scroll);
	rt->emptying_scroll = NULL;
	rt->emptying = -1;
	if (!ok)
	{
		/* the next try reads what is left from the start */
		os_scroll_clear(g->server, scroll);
		return failed(status, req);
	}
	if (more)
	{
		/* the next turn goes on with this scroll */
		rt->emptying = g->row.generation;
		rt->emptying_scroll = MemoryContextStrdup(TopMemoryContext, scroll);
		return true;
	}
	os_scroll_clear(g->server, scroll);
	if (xact_begin(true, NULL, 0))
	{
		generation_emptied(g->row.generation, g->row.truncate_version);
		status->reread = true;
		xact_commit();
	}
	g->row.truncate_version = -1;
	return true;
}

/*
 * Serve g: its settings for serving, a refresh (so that what the alias
 * shows at once is complete), then the alias moved to it in one request.
 */
static bool
serve(ShipIndex *x, ShipGeneration *g, ShipStatus *status)
{
	HttpRequest *req;
	List	   *holders;
	ListCell   *lc;

	if (g->server == NULL)
		return no_server(status, g);
	if (!os_succeeded(req = os_put_settings(g->server, g->row.concrete, g->row.live_settings), 0) ||
		!os_succeeded(req = os_refresh(g->server, g->row.concrete), 0))
		return failed(status, req);
	holders = os_alias_holders(g->server, g->row.alias, &req);
	if (!os_succeeded(req, 404))
		return failed(status, req);
	if (!alias_may_move(x, g, holders, true, status))
		return false;
	if (!os_succeeded(req = os_move_alias(g->server, g->row.alias, holders, g->row.concrete), 0))
		return failed(status, req);
	alias_taken(x, status);
	if (xact_begin(true, NULL, 0))
	{
		generation_serve(g->row.generation);
		status->reread = true;
		xact_commit();
	}
	ereport(LOG,
			(errmsg("flusso: OpenSearch alias \"%s\" of index \"%s\" now serves \"%s\"",
					g->row.alias, x->name, g->row.concrete)));
	foreach(lc, x->generations)
	{
		ShipGeneration *other = lfirst(lc);

		if (other != g && (other->row.state == GENERATION_SERVED ||
						   (other->row.state == GENERATION_SEEDED &&
							other->row.generation < g->row.generation)))
			other->row.state = GENERATION_RETIRED;
	}
	g->row.state = GENERATION_SERVED;
	return true;
}

/*
 * The served generation g is gone from OpenSearch: retire it (the retire
 * step deletes what is left of it), and have the index seeded again into
 * a new one, with its mapping, unless a newer generation is on its way;
 * readers of the alias find nothing until that one is served.
 */
static bool
served_gone(ShipIndex *x, ShipGeneration *g, const char *what, ShipStatus *status)
{
	bool		newer = false;
	char	   *message;
	ListCell   *lc;

	foreach(lc, x->generations)
	{
		ShipGeneration *other = lfirst(lc);

		if (other->row.generation > g->row.generation && ship_generation_active(other))
			newer = true;
	}
	if (!xact_begin(true, NULL, 0))
		return false;
	status->reread = true;
	if (generation_retire_served(g->row.generation) && !newer)
		(void) catalog_request(SIGNAL_RESNAPSHOT, x->name, NULL);
	xact_commit();
	g->row.state = GENERATION_RETIRED;
	message = psprintf("OpenSearch index \"%s\", which alias \"%s\" served, %s; %s",
					   g->row.concrete, g->row.alias, what,
					   newer ? "the generation being seeded will be served in its place"
					   : "the index is seeded again into a new one");
	ereport(LOG, (errmsg("flusso: index \"%s\": %s", x->name, message)));
	ship_record_error(x->name, message);
	return false;
}

/*
 * Is the served generation g still what OpenSearch serves?  Its index
 * must exist with flusso's mapping (strict: a _bulk that finds the index
 * gone creates it with dynamic mappings), and the alias serve it alone;
 * an alias missing or moved is put back, and flusso_status() says so.
 */
static bool
check_served(ShipIndex *x, ShipGeneration *g, ShipStatus *status)
{
	HttpRequest *req;
	char	   *dynamic;
	char	   *type;
	List	   *holders;
	StringInfoData names;
	ListCell   *lc;

	if (g->server == NULL)
		return no_server(status, g);
	dynamic = os_index_dynamic(g->server, g->row.concrete, &req);
	type = os_succeeded(req, 0) ? NULL : os_json_error_type(req->response);
	if (req->status == 404 && type && strcmp(type, "index_not_found_exception") == 0)
		return served_gone(x, g, "was deleted", status);
	if (!os_succeeded(req, 0))
	{
		/* closed: its _bulk items are refused for now, and say so */
		if (type == NULL || strcmp(type, "index_closed_exception") != 0)
			return failed(status, req);
	}
	else if (dynamic == NULL || strcmp(dynamic, "strict") != 0)
	{
		/* created again by a _bulk, with whatever it was sent: delete it */
		if (!os_succeeded(req = os_delete_index(g->server, g->row.concrete), 404))
			return failed(status, req);
		return served_gone(x, g, "was deleted and created again with dynamic mappings (it is deleted)",
						   status);
	}
	holders = os_alias_holders(g->server, g->row.alias, &req);
	if (!os_succeeded(req, 404))
		return failed(status, req);
	if (list_length(holders) == 1 && strcmp(linitial(holders), g->row.concrete) == 0)
		return true;
	if (!alias_may_move(x, g, holders, true, status))
		return false;
	if (!os_succeeded(req = os_move_alias(g->server, g->row.alias, holders, g->row.concrete), 0))
		return failed(status, req);
	alias_taken(x, status);
	initStringInfo(&names);
	foreach(lc, holders)
		appendStringInfo(&names, "%s\"%s\"", names.len > 0 ? ", " : "", (char *) lfirst(lc));
	ereport(LOG,
			(errmsg("flusso: OpenSearch alias \"%s\" of index \"%s\" served %s; it serves \"%s\" again",
					g->row.alias, x->name, holders ? names.data : "nothing", g->row.concrete)));
	ship_record_error(x->name,
					  psprintf("OpenSearch alias \"%s\" served %s; it was put back on \"%s\"",
							   g->row.alias, holders ? names.data : "nothing", g->row.concrete));
	return true;
}

/* The served generation g has its live settings: record it in rt. */
static void
record_settled(ShipRuntime *rt, const ShipGeneration *g)
{
	if (rt->settled_settings)
		pfree(rt->settled_settings);
	rt->settled = g->row.generation;
	rt->settled_settings = MemoryContextStrdup(TopMemoryContext, g->row.live_settings);
}

/*
 * Put the live settings (replicas, refresh interval) on the served
 * generation g unless rt says they are there: once a shipper starts (a
 * change made before it stopped may not have been), and after the index's
 * options changed them (flusso_set_sinks() seeds nothing for those).  The
 * index stays served all along, and documents go on shipping whatever the
 * answer: one that fails is said in flusso_status() and tried again with
 * the next check of the served generation.
 */
static void
settle(ShipIndex *x, ShipRuntime *rt, ShipGeneration *g)
{
	HttpRequest *req;

	if (rt->settled == g->row.generation && rt->settled_settings &&
		strcmp(rt->settled_settings, g->row.live_settings) == 0)
		return;
	if (g->server == NULL ||
		(rt->settle_failed_at != 0 &&
		 GetCurrentTimestamp() < TimestampTzPlusMilliseconds(rt->settle_failed_at, SHIP_CHECK_MS)))
		return;
	if (!os_succeeded(req = os_put_settings(g->server, g->row.concrete, g->row.live_settings), 0))
	{
		rt->settle_failed_at = GetCurrentTimestamp();
		ship_record_error(x->name,
						  psprintf("the replicas and refresh interval of the index could not be put on OpenSearch index \"%s\": %s",
								   g->row.concrete, http_failure(req)));
		return;
	}
	rt->settle_failed_at = 0;
	if (rt->settled == g->row.generation)
		ereport(LOG,
				(errmsg("flusso: OpenSearch index \"%s\" of index \"%s\" now has %s",
						g->row.concrete, x->name, g->row.live_settings)));
	record_settled(rt, g);
}

/*
 * Take the steps the generations of x need now, in order; false when the
 * turn ends there: a step failed (said in *status), or the served
 * generation was found gone (said in flusso_status()).  Only the latest seeded generation is
 * served: older ones are retired with the swap.  One that lacks rejected
 * documents is not served until they are retried and shipped: readers
 * keep the generation they have, and flusso_status() says why.
 */
bool
ship_generations(ShipIndex *x, ShipRuntime *rt, ShipStatus *status)
{
	ShipGeneration *latest_seeded = NULL;
	ShipGeneration *served = NULL;
	bool		foreign;
	ListCell   *lc;

	foreach(lc, x->generations)
	{
		ShipGeneration *g = lfirst(lc);

		if (!ship_generation_active(g) && !retire(x, g, status))
			return false;
	}
	if (!x->live)
		return true;
	foreach(lc, x->generations)
	{
		ShipGeneration *g = lfirst(lc);

		if (!ship_generation_active(g))
			continue;
		if (!g->row.created && !create(x, g, status))
			return false;
		/* nothing is written into an index that is not this database's */
		if (!generation_owned(x, g, true, status, &foreign))
			return false;
		if (g->row.remap && !remap(x, rt, g, status))
			return false;
		/* emptied over several turns, and nothing else of x until it is */
		if (g->row.truncate_version >= 0 && (!empty(rt, g, status) || g->row.truncate_version >= 0))
			return false;
		if (g->row.state == GENERATION_SEEDED)
			latest_seeded = g;
		if (g->row.state == GENERATION_SERVED)
			served = g;
	}
	if (served && GetCurrentTimestamp() >= TimestampTzPlusMilliseconds(rt->checked_at, SHIP_CHECK_MS))
	{
		if (!check_served(x, served, status))
			return false;
		rt->checked_at = GetCurrentTimestamp();
	}
	if (served)
		settle(x, rt, served);
	if (latest_seeded && latest_seeded->row.drained && latest_seeded->row.rejected > 0)
		ship_record_error(x->name,
						  psprintf("OpenSearch index \"%s\" is not served: " INT64_FORMAT " of its documents were rejected; see flusso_rejected('%s'), then call flusso_retry_rejected('%s')",
								   latest_seeded->row.concrete, latest_seeded->row.rejected,
								   x->name, x->name));
	else if (latest_seeded && latest_seeded->row.drained)
	{
		if (!serve(x, latest_seeded, status))
			return false;
		record_settled(rt, latest_seeded);
	}
	conflict_over(x, status);
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

		if (ship_generation_active(g) && g->row.created && x->live)
			return true;
	}
	return false;
}

/*-------------------------------------------------------------------------
 *
 * verify_opensearch.c
 *	  flusso_verify() for the OpenSearch sink: every document readers of
 *	  the index's alias see against a fresh build, and with repair, what
 *	  differs put right.
 *
 * What readers read is what counts: the alias, not the generation the
 * catalog says it serves.  An alias that is missing, or serves another
 * index, is a row of its own (with no id); a missing one ends the
 * verification there, since readers see no document of the index.  What
 * the alias serves is refreshed, then read a page at a time in _id order
 * (search_after), with each document's version, and each page's
 * documents are built by id and compared as jsonb: different, or extra
 * (builds nothing).  Then every document that builds and was not seen is
 * missing.  Documents still queued in the outbox are left out: they are
 * on their way (flusso_status() counts them), and a fresh build would not
 * say what OpenSearch holds of them.
 *
 * Repairing sends what was found to the served index in _bulk requests:
 * the fresh build of a missing or different document, a delete of an
 * extra one, each at the WAL's insert position, above every version
 * flusso gave so far, or at the version OpenSearch holds when that is
 * higher still (something else wrote it: external_gte takes an equal
 * version, but flusso's later changes, at lower versions, cannot
 * overwrite it, and the row says that a new generation is the cure).
 * What OpenSearch took is forgotten from flusso.rejected (a 409 for a
 * foreign version quarantines the document) and from the digests, so
 * that waits are no longer held by it and its next rebuild is sent.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/jsonb.h"

#include "access/xlog.h"
#include "utils/array.h"

#include "util/access.h"
#include "util/attempt.h"
#include "util/pinned.h"
#include "util/string_hash.h"
#include "document/by_id.h"
#include "api/verify_build.h"
#include "api/verify_opensearch.h"
#include "ipc/requests.h"
#include "opensearch/api.h"
#include "opensearch/bulk.h"
#include "opensearch/http.h"
#include "opensearch/json.h"
#include "store/catalog_opensearch_generation.h"
#include "store/catalog_opensearch_digest.h"
#include "store/catalog_outbox.h"
#include "store/catalog_rejected.h"

#define VERIFY_PAGE 1000
/* documents repaired per _bulk */
#define REPAIR_BULK 500

/* A document that is not as it should be, and what repairing it takes. */
typedef struct Finding
{
	char	   *id;
	const char *problem;		/* missing, different, extra */
	char	   *doc;			/* its fresh build; NULL: extra */
	int64		held;			/* the version OpenSearch holds; 0: none */
	bool		gone;			/* missing, and builds nothing now */
} Finding;

/* ids, as a set of strings */
typedef struct IdEntry
{
	char	   *id;				/* the hash key: a pointer to the string */
} IdEntry;

static HTAB *
id_set(void)
{
	return string_hash_create("flusso verify ids", sizeof(IdEntry), CurrentMemoryContext);
}

static void
id_add(HTAB *set, const char *id)
{
	char	   *copy = pstrdup(id);

	(void) hash_search(set, &copy, HASH_ENTER, NULL);
}

static bool
id_in(HTAB *set, const char *id)
{
	return hash_search(set, &id, HASH_FIND, NULL) != NULL;
}

/*
 * The served generation of the index, its alias and its server, as the
 * owner reaches it; and the ids queued for shipping.  NULL when none is
 * served.
 */
static char *
served_generation(const StoredIndex *index, char **alias, OpenSearchServer **server,
				  HTAB *pending)
{
	char	   *concrete;
	char	   *server_name = NULL;
	CatalogUser saved;
	ListCell   *lc;

	catalog_become_owner(&saved);
	concrete = generation_served(index->name, &server_name, alias);
	foreach(lc, outbox_ids(index->name))
		id_add(pending, lfirst(lc));
	catalog_restore_user(&saved);
	if (concrete)
		*server = os_server_load(server_name, index->owner, false);
	return concrete;
}

static void
read_failed(const HttpRequest *req, const char *alias)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("could not read the documents of OpenSearch alias \"%s\"", alias),
			 errdetail("%s", http_failure(req))));
}

/*
 * Does the alias serve concrete, and nothing else?  If not, say what it
 * serves in a row without an id; false when it is missing.
 */
static bool
alias_serves(ReturnSetInfo *rsinfo, const OpenSearchServer *server, const char *alias,
			 const char *concrete)
{
	HttpRequest *req;
	List	   *holders = os_alias_holders(server, alias, &req);
	StringInfoData names;
	ListCell   *lc;

	if (!os_succeeded(req, 404))
		read_failed(req, alias);
	if (holders == NIL)
	{
		verify_emit(rsinfo, NULL, psprintf("alias \"%s\" is missing; it should serve \"%s\"",
										   alias, concrete), "opensearch");
		return false;
	}
	if (list_length(holders) == 1 && strcmp(linitial(holders), concrete) == 0)
		return true;
	initStringInfo(&names);
	foreach(lc, holders)
		appendStringInfo(&names, "%s\"%s\"", names.len > 0 ? ", " : "", (char *) lfirst(lc));
	verify_emit(rsinfo, NULL, psprintf("alias \"%s\" serves %s, not \"%s\"",
									   alias, names.data, concrete), "opensearch");
	return true;
}

static Finding *
finding(const char *id, const char *problem, char *doc, int64 held)
{
	Finding    *f = palloc(sizeof(Finding));

	f->id = pstrdup(id);
	f->problem = problem;
	f->doc = doc;
	f->held = held;
	f->gone = false;
	return f;
}

/* ids to build, and their documents once built */
typedef struct PageBuild
{
	const StoredIndex *index;
	const DocumentQuery *q;
	char	  **ids;
	int			n;
	char	  **built;
} PageBuild;

static void
build_page_ids(void *arg)
{
	PageBuild  *page = arg;

	page->built = doc_build_ids(page->q, page->index->owner, page->ids, page->n);
}

/*
 * The fresh build of each of ids[0..n-1] (NULL: builds nothing).  An _id
 * that no row could have (not the key's parts, or a part not of its type:
 * written by something else) fails the page's build: then each id is
 * built alone, and one that fails builds nothing, so it is extra.
 */
static char **
build_page(const StoredIndex *index, const DocumentQuery *q, char **ids, int n)
{
	PageBuild	page = {index, q, ids, n, NULL};
	char	  **built;
	char	   *failure;

	if (attempt(build_page_ids, &page, &failure))
		return page.built;
	built = palloc0(sizeof(char *) * n);
	for (int i = 0; i < n; i++)
	{
		PageBuild	one = {index, q, &ids[i], 1, NULL};

		if (attempt(build_page_ids, &one, &failure))
			built[i] = one.built[0];
	}
	return built;
}

/*
 * Compare one page of hits with their fresh build, adding what is wrong to
 * *findings.
 */
static void
verify_page(List **findings, const StoredIndex *index, const DocumentQuery *q,
			JsonbContainer *hits, HTAB *seen, HTAB *pending)
{
	JsonbIterator *it = JsonbIteratorInit(hits);
	JsonbValue	v;
	JsonbIteratorToken token;
	List	   *ids = NIL;
	List	   *sources = NIL;
	List	   *versions = NIL;
	char	  **id_array;
	char	  **built;
	int			n = 0;
	ListCell   *ic,
			   *sc,
			   *vc;

	while ((token = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		JsonbContainer *source;
		char	   *id;
		int64		version = 0;

		if (token != WJB_ELEM || v.type != jbvBinary)
			continue;
		id = os_json_text(v.val.binary.data, "_id");
		source = os_json_object(v.val.binary.data, "_source");
		(void) os_json_number(v.val.binary.data, "_version", &version);
		if (id == NULL)
			continue;
		id_add(seen, id);
		if (id_in(pending, id))
			continue;
		ids = lappend(ids, id);
		sources = lappend(sources, source);
		versions = lappend(versions, palloc(sizeof(int64)));
		*(int64 *) llast(versions) = version;
	}
	if (ids == NIL)
		return;
	id_array = palloc(sizeof(char *) * list_length(ids));
	foreach(ic, ids)
		id_array[n++] = lfirst(ic);
	built = build_page(index, q, id_array, n);
	n = 0;
	forthree(ic, ids, sc, sources, vc, versions)
	{
		char	   *doc = built[n++];
		JsonbContainer *source = lfirst(sc);
		int64		held = *(int64 *) lfirst(vc);

		if (doc == NULL)
			*findings = lappend(*findings, finding(lfirst(ic), "extra", NULL, held));
		else if (source == NULL ||
				 compareJsonbContainers(&DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(doc)))->root,
										source) != 0)
			*findings = lappend(*findings, finding(lfirst(ic), "different", doc, held));
	}
}

/* The fresh build of each missing document of findings, to repair it with. */
static void
build_missing(const StoredIndex *index, const DocumentQuery *q, List *findings)
{
	List	   *missing = NIL;
	char	  **ids;
	char	  **built;
	ListCell   *lc;

	foreach(lc, findings)
	{
		if (strcmp(((Finding *) lfirst(lc))->problem, "missing") == 0)
			missing = lappend(missing, lfirst(lc));
	}
	if (missing == NIL)
		return;
	ids = palloc(sizeof(char *) * list_length(missing));
	foreach(lc, missing)
		ids[foreach_current_index(lc)] = ((Finding *) lfirst(lc))->id;
	built = doc_build_ids(q, index->owner, ids, list_length(missing));
	foreach(lc, missing)
	{
		Finding    *f = lfirst(lc);

		f->doc = built[foreach_current_index(lc)];
		/* gone since it was found: nothing to send */
		f->gone = f->doc == NULL;
	}
}

/*
 * Send findings[from, to) to concrete: the build, or a delete for an extra
 * document, at a version above what flusso gave and what OpenSearch holds
 * (see the header).  Each finding's outcome in words, in *outcomes, and
 * the ids OpenSearch took in *repaired.
 */
static void
repair_some(const OpenSearchServer *server, const char *concrete, Finding **findings,
			int from, int to, char **outcomes, List **repaired)
{
	int64		above = (int64) GetXLogInsertRecPtr();
	StringInfoData body;
	bool	   *deletes = palloc(sizeof(bool) * (to - from));
	int		   *item = palloc(sizeof(int) * (to - from));
	BulkItemResult *results = palloc0(sizeof(BulkItemResult) * (to - from));
	HttpRequest *req = NULL;
	char	   *problem = NULL;
	bool		answered;
	int			nitems = 0;

	initStringInfo(&body);
	for (int i = from; i < to; i++)
	{
		Finding    *f = findings[i];
		int64		version = Max(f->held, above);

		item[i - from] = -1;
		if (f->gone)
			continue;
		item[i - from] = nitems;
		deletes[nitems++] = f->doc == NULL;
		if (f->doc)
			bulk_add_index(&body, concrete, f->id, version, f->doc);
		else
			bulk_add_delete(&body, concrete, f->id, version);
	}
	if (nitems > 0)
	{
		req = http_bulk_request(server, body.data, body.len);
		http_run(req);
	}
	answered = req != NULL && os_succeeded(req, 0) &&
		bulk_read_response(req->response, nitems, deletes, results, &problem);
	for (int i = from; i < to; i++)
	{
		Finding    *f = findings[i];
		BulkItemResult *r = item[i - from] >= 0 ? &results[item[i - from]] : NULL;

		if (r == NULL)
			outcomes[i] = psprintf("%s, and builds nothing any more: nothing to repair", f->problem);
		else if (!answered)
			outcomes[i] = psprintf("%s, not repaired: %s", f->problem,
								   problem ? problem : http_failure(req));
		else if (r->status < 200 || r->status >= 300)
			outcomes[i] = psprintf("%s, not repaired: OpenSearch answered %d (%s)", f->problem,
								   r->status, r->error_type ? r->error_type : "no error type");
		else
		{
			*repaired = lappend(*repaired, f->id);
			outcomes[i] = f->held > above
				? psprintf("%s, repaired at version " INT64_FORMAT ", which something else gave it, above any flusso gives: its later changes cannot overwrite it until flusso_resnapshot() seeds a new generation",
						   f->problem, f->held)
				: psprintf("%s, repaired", f->problem);
		}
	}
	if (req)
		http_release(req);
}

/*
 * Say what was found, repaired first when asked: in bulks, then what
 * OpenSearch took forgotten from flusso.rejected and from the digests.
 */
static void
report_findings(ReturnSetInfo *rsinfo, const StoredIndex *index, const OpenSearchServer *server,
				const char *concrete, List *findings, bool repair)
{
	int			n = list_length(findings);
	Finding   **all = palloc(sizeof(Finding *) * Max(n, 1));
	char	  **outcomes = palloc(sizeof(char *) * Max(n, 1));
	List	   *repaired = NIL;
	ListCell   *lc;

	foreach(lc, findings)
	{
		all[foreach_current_index(lc)] = lfirst(lc);
		outcomes[foreach_current_index(lc)] = (char *) ((Finding *) lfirst(lc))->problem;
	}
	for (int from = 0; repair && from < n; from += REPAIR_BULK)
		repair_some(server, concrete, all, from, Min(from + REPAIR_BULK, n), outcomes, &repaired);
	if (repaired != NIL)
	{
		Datum	   *ids = palloc(sizeof(Datum) * list_length(repaired));
		Datum		id_array;
		CatalogUser saved;

		foreach(lc, repaired)
			ids[foreach_current_index(lc)] = CStringGetTextDatum(lfirst(lc));
		id_array = PointerGetDatum(construct_array(ids, list_length(repaired), TEXTOID, -1,
												   false, TYPALIGN_INT));
		catalog_become_owner(&saved);
		catalog_forget_rejected_ids(index->name, id_array);
		digest_forget_ids(index->name, id_array);
		catalog_restore_user(&saved);
		/* the shipper says again, at its next pass, what holds waits back */
		request_shipper_at_commit();
	}
	for (int i = 0; i < n; i++)
		verify_emit(rsinfo, all[i]->id, outcomes[i], "opensearch");
}

void
verify_opensearch(ReturnSetInfo *rsinfo, const StoredIndex *index, const DocumentQuery *q,
				  bool repair)
{
	List	   *findings = NIL;
	OpenSearchServer *server = NULL;
	HTAB	   *pending = id_set();
	HTAB	   *seen = id_set();
	char	   *alias = NULL;
	char	   *concrete = served_generation(index, &alias, &server, pending);
	char	   *scroll = NULL;
	HttpRequest *req;
	BuildSession session;

	if (concrete == NULL)
	{
		ereport(NOTICE,
				(errmsg("index \"%s\" has no OpenSearch generation served yet: nothing there to verify",
						index->name)));
		return;
	}
	if (!alias_serves(rsinfo, server, alias, concrete))
		return;
	if (!os_succeeded(req = os_refresh(server, alias), 0))
		read_failed(req, alias);
	for (;;)
	{
		Jsonb	   *doc;
		JsonbContainer *hits;

		req = os_scroll_page(server, alias, scroll, VERIFY_PAGE, true);
		if (!os_succeeded(req, 0) || (doc = os_json_parse(req->response)) == NULL ||
			(hits = os_json_object(os_json_object(&doc->root, "hits"), "hits")) == NULL ||
			(scroll = os_json_text(&doc->root, "_scroll_id")) == NULL)
		{
			os_scroll_clear(server, scroll);
			read_failed(req, alias);
		}
		if (JsonContainerSize(hits) == 0)
			break;
		verify_page(&findings, index, q, hits, seen, pending);
		http_release(req);
	}
	http_release(req);
	os_scroll_clear(server, scroll);

	/* what builds and was not seen */
	verify_build_all(index, q, psprintf("WITH built AS (%s) SELECT id FROM built ORDER BY id", q->sql),
					 &session);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *id = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);

		if (!id_in(seen, id) && !id_in(pending, id))
			findings = lappend(findings, finding(id, "missing", NULL, 0));
	}
	SPI_finish();
	doc_session_end(&session);
	/* the builds of the missing ones, to send */
	if (repair)
		build_missing(index, q, findings);
	report_findings(rsinfo, index, server, concrete, findings, repair);
}

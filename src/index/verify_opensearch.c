/*-------------------------------------------------------------------------
 *
 * verify_opensearch.c
 *	  flusso_verify() for the OpenSearch sink: every document readers of
 *	  the index's alias see against a fresh build.
 *
 * What readers read is what counts: the alias, not the generation the
 * catalog says it serves.  An alias that is missing, or serves another
 * index, is a row of its own (with no id); a missing one ends the
 * verification there, since readers see no document of the index.  What
 * the alias serves is refreshed, then read a page at a time in _id order
 * (search_after), and each page's documents are built by id and compared
 * as jsonb: different, or extra (builds nothing).  Then every document
 * that builds and was not seen is missing.  Documents still queued in the
 * outbox are left out: they are on their way (flusso_status() counts
 * them), and a fresh build would not say what OpenSearch holds of them.
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

#include "util/string_hash.h"
#include "document/by_id.h"
#include "index/access.h"
#include "index/verify.h"
#include "opensearch/api.h"
#include "opensearch/json.h"
#include "store/catalog_opensearch_generation.h"
#include "store/catalog_outbox.h"

#define VERIFY_PAGE 1000

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

/* Compare one page of hits with their fresh build; the last _id read. */
static char *
verify_page(ReturnSetInfo *rsinfo, const StoredIndex *index, const DocumentQuery *q,
			JsonbContainer *hits, HTAB *seen, HTAB *pending)
{
	JsonbIterator *it = JsonbIteratorInit(hits);
	JsonbValue	v;
	JsonbIteratorToken token;
	List	   *ids = NIL;
	List	   *sources = NIL;
	char	   *last = NULL;
	char	  **id_array;
	char	  **built;
	int			n = 0;
	ListCell   *ic,
			   *sc;

	while ((token = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		JsonbContainer *source;
		char	   *id;

		if (token != WJB_ELEM || v.type != jbvBinary)
			continue;
		id = os_json_text(v.val.binary.data, "_id");
		source = os_json_object(v.val.binary.data, "_source");
		if (id == NULL)
			continue;
		last = id;
		id_add(seen, id);
		if (id_in(pending, id))
			continue;
		ids = lappend(ids, id);
		sources = lappend(sources, source);
	}
	if (ids == NIL)
		return last;
	id_array = palloc(sizeof(char *) * list_length(ids));
	foreach(ic, ids)
		id_array[n++] = lfirst(ic);
	built = doc_build_ids(q, index->owner, id_array, n);
	n = 0;
	forboth(ic, ids, sc, sources)
	{
		char	   *doc = built[n++];
		JsonbContainer *source = lfirst(sc);

		if (doc == NULL)
			verify_emit(rsinfo, lfirst(ic), "extra", "opensearch");
		else if (source == NULL ||
				 compareJsonbContainers(&DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(doc)))->root,
										source) != 0)
			verify_emit(rsinfo, lfirst(ic), "different", "opensearch");
	}
	return last;
}

void
verify_opensearch(ReturnSetInfo *rsinfo, const StoredIndex *index, const DocumentQuery *q)
{
	OpenSearchServer *server = NULL;
	HTAB	   *pending = id_set();
	HTAB	   *seen = id_set();
	char	   *alias = NULL;
	char	   *concrete = served_generation(index, &alias, &server, pending);
	char	   *after = NULL;
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

		req = os_page_by_id(server, alias, after, VERIFY_PAGE, true);
		if (!os_succeeded(req, 0) || (doc = os_json_parse(req->response)) == NULL ||
			(hits = os_json_object(os_json_object(&doc->root, "hits"), "hits")) == NULL)
			read_failed(req, alias);
		if (JsonContainerSize(hits) == 0)
			break;
		after = verify_page(rsinfo, index, q, hits, seen, pending);
		http_release(req);
	}

	/* what builds and was not seen */
	verify_build_all(index, q, psprintf("WITH built AS (%s) SELECT id FROM built ORDER BY id", q->sql),
					 &session);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *id = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);

		if (!id_in(seen, id) && !id_in(pending, id))
			verify_emit(rsinfo, id, "missing", "opensearch");
	}
	SPI_finish();
	doc_session_end(&session);
}

/*-------------------------------------------------------------------------
 *
 * bulk.c
 *	  Writes _bulk items and reads what became of them.
 *
 * Every index and delete item carries version_type external_gte and the
 * version flusso gives it (a commit LSN): OpenSearch keeps a document
 * only if its version is not older than the one it has, so a replayed or
 * retried item can never bring an older state back.  Hence a 409
 * version_conflict_engine_exception is success (a newer version is
 * there), as is a 404 on delete (nothing to delete) — unless the version
 * there, which the error's reason gives, is above the WAL's insert
 * position, which every version flusso ever gave is at or below: then
 * something else wrote the document, no later change of flusso's can
 * overwrite it, and the item is rejected, saying so (BULK_FOREIGN), so
 * that flusso_status() counts it and flusso_wait() is not satisfied.  429 and 5xx may
 * succeed if tried again, and so may an item refused because its index is
 * closed or blocked for writes (index_closed_exception,
 * cluster_block_exception: an operator's doing, undone as easily);
 * anything else (a mapping that refuses a value, say) cannot.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "utils/builtins.h"
#include "utils/json.h"

#include "opensearch/bulk.h"
#include "opensearch/json.h"

static void
add_action(StringInfo buf, const char *action, const char *index, const char *id, int64 version)
{
	appendStringInfo(buf, "{\"%s\":{\"_index\":", action);
	escape_json(buf, index);
	appendStringInfoString(buf, ",\"_id\":");
	escape_json(buf, id);
	appendStringInfo(buf, ",\"version\":" INT64_FORMAT ",\"version_type\":\"external_gte\"}}\n",
					 version);
}

/* Index doc (JSON text on one line) as id at version. */
void
bulk_add_index(StringInfo buf, const char *index, const char *id, int64 version, const char *doc)
{
	add_action(buf, "index", index, id, version);
	appendStringInfoString(buf, doc);
	appendStringInfoChar(buf, '\n');
}

void
bulk_add_delete(StringInfo buf, const char *index, const char *id, int64 version)
{
	add_action(buf, "delete", index, id, version);
}

/*
 * The version a 409's reason says the document has: "[id]: version
 * conflict, current version [X] is higher or equal to the one provided
 * [V]" (OpenSearch, Elasticsearch); -1 when it says none.  The id may hold
 * anything: the text after its closing "]: " is read, from the last one.
 */
static int64
conflicting_version(const char *reason)
{
	const char *marker = "current version [";
	const char *at = NULL;
	const char *p;
	char	   *end;
	int64		version;

	for (p = reason; p && (p = strstr(p, marker)) != NULL; p++)
		at = p;
	if (at == NULL)
		return -1;
	errno = 0;
	version = strtoi64(at + strlen(marker), &end, 10);
	if (errno != 0 || *end != ']' || version < 0)
		return -1;
	return version;
}

static BulkOutcome
classify(bool delete, int status, const char *type, const char *reason)
{
	if (status >= 200 && status < 300)
		return BULK_DONE;
	if (status == 409 && reason != NULL &&
		conflicting_version(reason) > (int64) GetXLogInsertRecPtr())
		return BULK_FOREIGN;
	if (status == 409)
		return BULK_DONE;
	if (status == 404 && delete && (type == NULL || strcmp(type, "index_not_found_exception") != 0))
		return BULK_DONE;
	if (status == 429 || status >= 500)
		return BULK_RETRY;
	if (type != NULL && (strcmp(type, "index_closed_exception") == 0 ||
						 strcmp(type, "cluster_block_exception") == 0))
		return BULK_RETRY;
	/* the index is gone: the shipper's check notices, and seeds again */
	if (status == 404)
		return BULK_RETRY;
	return BULK_REJECTED;
}

/*
 * Read a _bulk response of nitems items (deletes[i]: item i deletes) into
 * results; false when it is not one, and then *problem says what is wrong
 * with it, quoting nothing of it.
 */
bool
bulk_read_response(const char *response, int nitems, const bool *deletes,
				   BulkItemResult *results, char **problem)
{
	const char *unreadable;
	Jsonb	   *doc = os_json_read(response, &unreadable);
	JsonbContainer *items;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken token;
	int			n = 0;

	if (doc == NULL)
	{
		*problem = pstrdup(unreadable);
		return false;
	}
	if ((items = os_json_object(&doc->root, "items")) == NULL || !JsonContainerIsArray(items))
	{
		*problem = pstrdup("it has no \"items\" array");
		return false;
	}
	it = JsonbIteratorInit(items);
	while ((token = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		JsonbContainer *result;
		JsonbContainer *error;
		int64		status = 0;

		if (token != WJB_ELEM)
			continue;
		if (n >= nitems)
		{
			*problem = psprintf("it has more than %d items", nitems);
			return false;
		}
		if (v.type != jbvBinary ||
			(result = os_json_object(v.val.binary.data, deletes[n] ? "delete" : "index")) == NULL)
		{
			*problem = psprintf("item %d is not the result of %s", n + 1,
								deletes[n] ? "a delete" : "an index");
			return false;
		}
		if (!os_json_number(result, "status", &status) || status < 100 || status > 599)
		{
			*problem = psprintf("item %d has no HTTP status", n + 1);
			return false;
		}
		error = os_json_object(result, "error");
		results[n].status = (int) status;
		results[n].error_type = error ? os_json_text(error, "type") : NULL;
		results[n].reason = error ? os_json_text(error, "reason") : NULL;
		results[n].outcome = classify(deletes[n], (int) status, results[n].error_type,
									  results[n].reason);
		if (results[n].outcome == BULK_FOREIGN)
		{
			int64		held = conflicting_version(results[n].reason);

			/* said in flusso's words: the id the reason quotes is not repeated */
			results[n].reason = psprintf("OpenSearch holds version " INT64_FORMAT " of the document, above any version flusso gives (the WAL is at %X/%X): something else wrote it, and no later change can overwrite it; flusso_verify() with repair => true puts flusso's document back",
										 held, LSN_FORMAT_ARGS(GetXLogInsertRecPtr()));
		}
		n++;
	}
	if (n != nitems)
	{
		*problem = psprintf("it has %d items", n);
		return false;
	}
	return true;
}

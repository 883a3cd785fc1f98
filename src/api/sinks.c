/*-------------------------------------------------------------------------
 *
 * sinks.c
 *	  The SQL functions over an index's sinks: flusso_set_sinks, where its
 *	  documents go, flusso_rejected, what OpenSearch refused of them, and
 *	  flusso_adopt, an alias taken over from another database.
 *
 * An index writes to the table sink, to one flusso_opensearch server, or
 * both.  Its owner chooses, and must have USAGE on the server: documents
 * hold what the index reads with the owner's rights, and they are shipped
 * with the credentials of the owner's user mapping; a server whose
 * index_prefix could make another server's aliases is refused.  The
 * OpenSearch options are checked before anything changes: shards (1 to
 * 1024), replicas (0 to 100), refresh_interval (-1, or a number with ms,
 * s, m or h) and on_error (quarantine or stop).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "ipc/requests.h"
#include "store/catalog_index.h"
#include "store/catalog_rejected.h"
#include "store/catalog_sink.h"
#include "opensearch/server.h"
#include "sink/sink.h"
#include "util/access.h"

PG_FUNCTION_INFO_V1(flusso_set_sinks);
PG_FUNCTION_INFO_V1(flusso_rejected);
PG_FUNCTION_INFO_V1(flusso_adopt);

static void
option_error(const char *key, const char *problem)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid OpenSearch option \"%s\"", key),
			 errdetail("%s", problem),
			 errhint("The options are shards (1 to 1024), replicas (0 to 100), refresh_interval ('1s', '30s', '-1', ...) and on_error ('quarantine' or 'stop').")));
}

static int
int_option(JsonbValue *v, const char *key, int min, int max)
{
	char	   *text;
	char	   *end;
	long		n;

	if (v->type != jbvNumeric)
		option_error(key, "It must be a whole number.");
	text = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric)));
	errno = 0;
	n = strtol(text, &end, 10);
	if (errno != 0 || *end != '\0')
		option_error(key, "It must be a whole number.");
	if (n < min || n > max)
		option_error(key, psprintf("It must be from %d to %d.", min, max));
	return (int) n;
}

static char *
string_option(JsonbValue *v, const char *key)
{
	if (v->type != jbvString)
		option_error(key, "It must be a string.");
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/* -1, or digits followed by ms, s, m or h */
static bool
valid_interval(const char *s)
{
	const char *p = s;

	if (strcmp(s, "-1") == 0)
		return true;
	while (*p >= '0' && *p <= '9')
		p++;
	return p > s && (strcmp(p, "ms") == 0 || strcmp(p, "s") == 0 ||
					 strcmp(p, "m") == 0 || strcmp(p, "h") == 0);
}

/* The options, checked and completed with their defaults, as JSON text. */
static char *
opensearch_options(Jsonb *options)
{
	int			shards = 1;
	int			replicas = 1;
	char	   *refresh = "1s";
	char	   *on_error = "quarantine";
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken token;
	char	   *key = NULL;
	StringInfoData out;

	if (!JB_ROOT_IS_OBJECT(options))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("OpenSearch options must be a JSON object")));
	it = JsonbIteratorInit(&options->root);
	while ((token = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (token == WJB_KEY)
			key = pnstrdup(v.val.string.val, v.val.string.len);
		else if (token == WJB_VALUE && strcmp(key, "shards") == 0)
			shards = int_option(&v, key, 1, 1024);
		else if (token == WJB_VALUE && strcmp(key, "replicas") == 0)
			replicas = int_option(&v, key, 0, 100);
		else if (token == WJB_VALUE && strcmp(key, "refresh_interval") == 0)
		{
			refresh = string_option(&v, key);
			if (!valid_interval(refresh))
				option_error(key, "It must be -1 (no refresh) or a number followed by ms, s, m or h.");
		}
		else if (token == WJB_VALUE && strcmp(key, "on_error") == 0)
		{
			on_error = string_option(&v, key);
			if (strcmp(on_error, "quarantine") != 0 && strcmp(on_error, "stop") != 0)
				option_error(key, "It must be 'quarantine' or 'stop'.");
		}
		else if (token == WJB_VALUE)
			option_error(key, "There is no such option.");
	}
	initStringInfo(&out);
	appendStringInfo(&out, "{\"shards\": %d, \"replicas\": %d, \"refresh_interval\": ",
					 shards, replicas);
	escape_json(&out, refresh);
	appendStringInfoString(&out, ", \"on_error\": ");
	escape_json(&out, on_error);
	appendStringInfoChar(&out, '}');
	return out.data;
}

/*
 * flusso_set_sinks(name text, sinks text[], opensearch_options jsonb)
 *
 * Where the index's documents go: 'table' and/or the name of a
 * flusso_opensearch server.  A sink added, or OpenSearch options that
 * build another index, have the index seeded again (the current documents
 * stay served until the new ones are complete); a sink removed is dropped
 * with its documents.
 */
Datum
flusso_set_sinks(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ArrayType  *sinks = PG_GETARG_ARRAYTYPE_P(1);
	Jsonb	   *options = PG_GETARG_JSONB_P(2);
	StoredIndex *index;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	bool		table = false;
	char	   *server = NULL;
	char	   *normalized = NULL;

	flusso_require_admin();
	index = catalog_load_index(name);
	flusso_require_owner(index->owner, name);
	catalog_lock_index_row(name);

	deconstruct_array(sinks, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
	{
		char	   *sink;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("a sink cannot be NULL")));
		sink = TextDatumGetCString(elems[i]);
		if (strcmp(sink, "table") == 0 && !table)
			table = true;
		else if (strcmp(sink, "table") == 0 || (server && strcmp(server, sink) == 0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("sink \"%s\" is named twice", sink)));
		else if (server)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("index \"%s\" can ship to one OpenSearch server, not to \"%s\" and \"%s\"",
							name, server, sink)));
		else
		{
			OpenSearchServer *loaded = os_server_load(sink, index->owner, false);
			const char *problem = os_prefix_problem(loaded->index_prefix);

			/* a prefix set before the validator required its ending */
			if (problem)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
						 errmsg("server \"%s\" has an index_prefix another server's could collide with", sink),
						 errdetail("%s", problem),
						 errhint("A superuser can give it one that ends with '-' or '.': ALTER SERVER %s OPTIONS (SET index_prefix '...');",
								 quote_identifier(sink))));
			if (!os_server_usable_by(sink, index->owner))
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						 errmsg("permission denied for foreign server %s", sink),
						 errdetail("Documents of index \"%s\" are shipped with the rights of its owner, role \"%s\".",
								   name, GetUserNameFromId(index->owner, false)),
						 errhint("The server's owner can run: GRANT USAGE ON FOREIGN SERVER %s TO %s;",
								 quote_identifier(sink),
								 quote_identifier(GetUserNameFromId(index->owner, false)))));
			server = sink;
		}
	}
	if (!table && server == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("index \"%s\" needs at least one sink", name),
				 errhint("Name 'table', a flusso_opensearch server, or both.")));
	if (server)
		normalized = opensearch_options(options);
	else if (!(JB_ROOT_IS_OBJECT(options) && JB_ROOT_COUNT(options) == 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("OpenSearch options are given, but no OpenSearch server")));

	if (sink_set(name, index->owner, table, server, normalized))
	{
		CatalogUser saved;

		catalog_become_owner(&saved);
		catalog_mark_for_seeding(name, true);
		catalog_restore_user(&saved);
	}
	request_worker_at_commit(true);
	request_shipper_at_commit();
	PG_RETURN_VOID();
}

/*
 * flusso_rejected(name text): the documents OpenSearch rejected for good,
 * with its reasons, which may quote the documents' values: shown to whom
 * may read the documents.
 */
Datum
flusso_rejected(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	StoredIndex *index;
	CatalogUser saved;

	flusso_require_admin();
	index = catalog_load_index(name);
	flusso_require_reader(index->owner, name);
	InitMaterializedSRF(fcinfo, 0);

	catalog_become_owner(&saved);
	catalog_list_rejected(name, rsinfo);
	catalog_restore_user(&saved);
	return (Datum) 0;
}

/*
 * flusso_adopt(name text): the index takes its OpenSearch alias over from
 * whichever database serves it now, which the shipper otherwise never
 * does (shipper/generations.c): the database this one is a copy of, once
 * this one is to take its place (after a migration), or another server
 * running as this database.  Once the alias is moved, that database's
 * shipper finds it serving an index not its own, and stops in conflict.
 * The owner's rights: the alias shows the owner's documents.
 */
Datum
flusso_adopt(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	StoredIndex *index;
	CatalogUser saved;
	bool		found;

	flusso_require_admin();
	index = catalog_load_index(name);
	flusso_require_owner(index->owner, name);
	catalog_become_owner(&saved);
	found = catalog_take_alias(name, true);
	catalog_restore_user(&saved);
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("index \"%s\" has no OpenSearch sink", name),
				 errhint("Only an OpenSearch alias can be taken over.")));
	request_shipper_at_commit();
	PG_RETURN_VOID();
}

/*-------------------------------------------------------------------------
 *
 * server.c
 *	  The options of flusso_opensearch servers and user mappings: the
 *	  wrapper's validator, which rejects an unknown or malformed option
 *	  when it is set, and the loading of a server with the credentials of
 *	  the role flusso ships for.
 *
 * A server is an OpenSearch or an Elasticsearch cluster.  Options of a
 * server: url (http or https, no credentials in it; or several, separated
 * by commas: nodes of one cluster) or cloud_id (an Elastic Cloud
 * deployment's, which names its https URL), one of the two required;
 * index_prefix, tls_verify, ca_file, client_cert, client_key, aws_region
 * and aws_service (SigV4 signing, for Amazon OpenSearch Service),
 * connect_timeout and request_timeout (seconds), bulk_max_documents,
 * bulk_max_bytes and bulks_in_flight (how many _bulk requests of one
 * index may be in flight at once).  Options of a user mapping, one way
 * of authenticating: user and password (basic), api_key (an Elasticsearch
 * API key, encoded, or with api_key_id its two halves), bearer_token, or
 * aws_access_key_id, aws_secret_access_key and aws_session_token.  The
 * wrapper itself has none.  Options that name a file the server reads
 * (ca_file, client_cert, client_key) are a superuser's, or
 * pg_read_server_files's, to set.  No value may hold a control character,
 * and a prefix ends with '-' or '.'.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <curl/curl.h>

#include "access/htup_details.h"
#include "access/reloptions.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_foreign_data_wrapper.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "common/base64.h"
#include "foreign/foreign.h"
#include "lib/stringinfo.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/syscache.h"

#include "compat.h"
#include "opensearch/server.h"

PG_FUNCTION_INFO_V1(flusso_opensearch_validator);

typedef enum OptionKind
{
	OPTION_URL,
	OPTION_PREFIX,
	OPTION_BOOL,
	OPTION_INT,
	OPTION_FILE,
	OPTION_WORD,				/* aws region, service: [a-z0-9-]+ */
	OPTION_CLOUD_ID,
	OPTION_TOKEN,				/* an API key or a bearer token */
	OPTION_TEXT
} OptionKind;

typedef struct OptionSpec
{
	const char *name;
	Oid			catalog;		/* where it may be set */
	OptionKind	kind;
	int			min;			/* OPTION_INT */
	int			max;
} OptionSpec;

static const OptionSpec options[] = {
	{"url", ForeignServerRelationId, OPTION_URL},
	{"cloud_id", ForeignServerRelationId, OPTION_CLOUD_ID},
	{"index_prefix", ForeignServerRelationId, OPTION_PREFIX},
	{"tls_verify", ForeignServerRelationId, OPTION_BOOL},
	{"ca_file", ForeignServerRelationId, OPTION_FILE},
	{"client_cert", ForeignServerRelationId, OPTION_FILE},
	{"client_key", ForeignServerRelationId, OPTION_FILE},
	{"aws_region", ForeignServerRelationId, OPTION_WORD},
	{"aws_service", ForeignServerRelationId, OPTION_WORD},
	{"connect_timeout", ForeignServerRelationId, OPTION_INT, 1, 3600},
	{"request_timeout", ForeignServerRelationId, OPTION_INT, 1, 86400},
	{"bulk_max_documents", ForeignServerRelationId, OPTION_INT, 1, 100000},
	{"bulk_max_bytes", ForeignServerRelationId, OPTION_INT, 1024, 1024 * 1024 * 1024},
	{"bulks_in_flight", ForeignServerRelationId, OPTION_INT, 1, 16},
	{"user", UserMappingRelationId, OPTION_TEXT},
	{"password", UserMappingRelationId, OPTION_TEXT},
	{"aws_access_key_id", UserMappingRelationId, OPTION_TEXT},
	{"aws_secret_access_key", UserMappingRelationId, OPTION_TEXT},
	{"aws_session_token", UserMappingRelationId, OPTION_TEXT},
	{"api_key", UserMappingRelationId, OPTION_TOKEN},
	{"api_key_id", UserMappingRelationId, OPTION_TOKEN},
	{"bearer_token", UserMappingRelationId, OPTION_TOKEN},
};

/* The ways a user mapping may authenticate: one of them at most. */
static const char *const auth_methods[][2] = {
	{"user", "basic authentication (user and password)"},
	{"aws_access_key_id", "AWS SigV4 signing (aws_access_key_id and aws_secret_access_key)"},
	{"api_key", "an API key (api_key)"},
	{"bearer_token", "a bearer token (bearer_token)"},
};

static const char *
catalog_name(Oid catalog)
{
	if (catalog == ForeignServerRelationId)
		return "server";
	if (catalog == UserMappingRelationId)
		return "user mapping";
	return "foreign-data wrapper";
}

static void
option_error(const DefElem *def, const char *problem, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
			 errmsg("invalid value for option \"%s\" of " OPENSEARCH_FDW, def->defname),
			 errdetail("%s", problem),
			 hint ? errhint("%s", hint) : 0));
}

/*
 * The base URLs a url option names: one, or several separated by commas
 * (spaces around each are not part of it), each without its trailing '/'.
 */
static List *
split_urls(const char *value)
{
	List	   *urls = NIL;
	char	   *copy = pstrdup(value);
	char	   *next = copy;

	for (;;)
	{
		char	   *comma = strchr(next, ',');
		char	   *end;

		if (comma)
			*comma = '\0';
		while (*next == ' ')
			next++;
		end = next + strlen(next);
		while (end > next && (end[-1] == ' ' || end[-1] == '/'))
			*--end = '\0';
		urls = lappend(urls, next);
		if (comma == NULL)
			break;
		next = comma + 1;
	}
	return urls;
}

/*
 * http(s)://host[:port][/path], without credentials, query or fragment;
 * named, when it is one of several.  Its scheme, lowercase.
 */
static char *
check_one_url(const DefElem *def, const char *value, bool named)
{
	CURLU	   *url = curl_url();
	char	   *part = NULL;
	const char *problem = NULL;
	bool		credentials = false;
	char	   *scheme;

	if (url == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	if (curl_url_set(url, CURLUPART_URL, value, 0) != CURLUE_OK)
		problem = "It is not a URL.";
	else if (curl_url_get(url, CURLUPART_SCHEME, &part, 0) != CURLUE_OK ||
			 (strcmp(part, "http") != 0 && strcmp(part, "https") != 0))
		problem = "Only http and https URLs are accepted.";
	else
	{
		static const CURLUPart absent[] = {CURLUPART_USER, CURLUPART_PASSWORD,
		CURLUPART_QUERY, CURLUPART_FRAGMENT};

		for (int i = 0; i < lengthof(absent) && problem == NULL; i++)
		{
			char	   *p = NULL;

			if (curl_url_get(url, absent[i], &p, 0) == CURLUE_OK)
			{
				credentials = absent[i] == CURLUPART_USER || absent[i] == CURLUPART_PASSWORD;
				problem = credentials ? "The URL carries credentials."
					: "The URL has a query or a fragment.";
			}
			curl_free(p);
		}
	}
	scheme = part ? pstrdup(part) : NULL;
	curl_free(part);
	curl_url_cleanup(url);
	if (value[0] == '\0')
		problem = "A URL is empty: two commas in a row, or one at an end.";
	else if (problem && named && !credentials)
		problem = psprintf("%s: %s", value, problem);
	if (problem)
		option_error(def, problem,
					 credentials
					 ? "Put the user and password in a user mapping: CREATE USER MAPPING FOR ... SERVER ... OPTIONS (user '...', password '...')."
					 : "Give the cluster's base URL, such as https://search.example.com:9200, or the base URLs of several of its nodes, separated by commas.");
	return scheme;
}

/*
 * One base URL, or several distinct ones, each well formed, all of one
 * scheme: the user mapping's credentials go to every node, and a server
 * that reads as TLS must never send them to one in clear text.
 */
static void
check_url(const DefElem *def, const char *value)
{
	List	   *urls = split_urls(value);
	char	   *first_scheme = NULL;
	ListCell   *lc;

	foreach(lc, urls)
	{
		char	   *scheme = check_one_url(def, lfirst(lc), list_length(urls) > 1);

		if (first_scheme == NULL)
			first_scheme = scheme;
		else if (strcmp(scheme, first_scheme) != 0)
			option_error(def,
						 psprintf("The URL %s is %s, the first one %s: the nodes of a server are all reached one way.",
								  (char *) lfirst(lc), scheme, first_scheme),
						 "Give every node the same scheme, https:// wherever the cluster speaks TLS, so that the user mapping's credentials never travel in clear text.");
		for (ListCell *other = list_head(urls); other != lc; other = lnext(urls, other))
		{
			if (strcmp(lfirst(other), lfirst(lc)) == 0)
				option_error(def, psprintf("The URL %s is named twice.", (char *) lfirst(lc)), NULL);
		}
	}
}

/*
 * What is wrong with an index prefix; NULL when nothing.  Lowercase letters,
 * digits, '.', '-', '_'; not starting with '-', '_', '.'; and, when not
 * empty, ending with '-' or '.', which no index name has: the alias
 * <prefix><index> then tells its prefix from its index, so two servers on
 * one cluster can never name one alias ('team_' + 'books' and 'team' +
 * '_books' would).
 */
const char *
os_prefix_problem(const char *prefix)
{
	size_t		len = strlen(prefix);
	bool		ok = len <= 100;

	for (const char *c = prefix; *c && ok; c++)
		ok = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
			*c == '.' || *c == '-' || *c == '_';
	if (!ok || (len > 0 && (prefix[0] == '-' || prefix[0] == '_' || prefix[0] == '.')))
		return "An index prefix has at most 100 lowercase letters, digits, '.', '-' or '_', and does not start with '-', '_' or '.'.";
	if (len > 0 && prefix[len - 1] != '-' && prefix[len - 1] != '.')
		return "An index prefix ends with '-' or '.', which no index name has, so that the prefixes of two servers can never make one alias name.";
	return NULL;
}

static void
check_prefix(const DefElem *def, const char *value)
{
	const char *problem = os_prefix_problem(value);

	if (problem)
		option_error(def, problem,
					 "OpenSearch index names are lowercase; the prefix keeps flusso's indexes apart from others, e.g. 'flusso-'.");
}

static void
check_word(const DefElem *def, const char *value)
{
	bool		ok = value[0] != '\0';

	for (const char *c = value; *c && ok; c++)
		ok = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-';
	if (!ok)
		option_error(def, "Only lowercase letters, digits and '-' are accepted.",
					 "An AWS region such as eu-west-1; the service is es, or aoss for OpenSearch Serverless.");
}

static void
check_int(const DefElem *def, const OptionSpec *spec, const char *value)
{
	char	   *end;
	long		n;

	errno = 0;
	n = strtol(value, &end, 10);
	if (errno != 0 || end == value || *end != '\0' || n < spec->min || n > spec->max)
		option_error(def, psprintf("It must be a whole number from %d to %d.", spec->min, spec->max),
					 NULL);
}

/*
 * A file the server process reads on the role's behalf: a superuser's, or
 * pg_read_server_files's, to name, as COPY FROM a file is.
 */
static void
check_file(const DefElem *def, const char *value)
{
	if (!is_absolute_path(value))
		option_error(def, "It must be an absolute path.", NULL);
	if (!superuser() && !has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to set option \"%s\" of " OPENSEARCH_FDW, def->defname),
				 errdetail("The option names a file the server reads."),
				 errhint("Only superusers and roles with privileges of pg_read_server_files may set it.")));
}

/*
 * An API key, its id or a bearer token: the characters of an RFC 6750
 * b64token, which is what Elasticsearch hands out, so that it goes into
 * an Authorization header as it is.  The value itself is never shown.
 */
static void
check_token(const DefElem *def, const char *value)
{
	bool		ok = value[0] != '\0';

	for (const char *c = value; *c && ok; c++)
		ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			(*c >= '0' && *c <= '9') || strchr("-._~+/=", *c) != NULL;
	if (!ok)
		option_error(def, "It must be a non-empty token of letters, digits and the characters - . _ ~ + / =.",
					 strcmp(def->defname, "api_key") == 0
					 ? "Give the API key's \"encoded\" value as Elasticsearch returned it, or its \"api_key\" value with its \"id\" in api_key_id."
					 : NULL);
}

/* host[:port]: letters, digits, '.' and '-', then a port from 1 to 65535 */
static bool
split_host_port(char *part, char **port)
{
	char	   *colon = strrchr(part, ':');

	*port = NULL;
	if (colon)
	{
		char	   *end;
		long		n;

		*colon = '\0';
		errno = 0;
		n = strtol(colon + 1, &end, 10);
		if (errno != 0 || end == colon + 1 || *end != '\0' || n < 1 || n > 65535)
			return false;
		*port = colon + 1;
	}
	if (part[0] == '\0')
		return false;
	for (const char *c = part; *c; c++)
	{
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			  (*c >= '0' && *c <= '9') || *c == '.' || *c == '-'))
			return false;
	}
	return true;
}

/*
 * The https base URL of the Elasticsearch deployment an Elastic Cloud ID
 * names.  The ID is "label:" and then, in base64, "domain[:port]$es-id
 * [:port][$kibana-id]"; the deployment's URL is https://es-id.domain:port,
 * the port the es-id's, else the domain's, else 443.
 */
static char *
cloud_id_url(const DefElem *def, const char *value)
{
	const char *colon = strchr(value, ':');
	const char *encoded = colon ? colon + 1 : value;
	int			encoded_len = strlen(encoded);
	int			max_len = pg_b64_dec_len(encoded_len);
	char	   *decoded = palloc(max_len + 1);
	int			len;
	char	   *dollar;
	char	   *domain;
	char	   *es_id;
	char	   *domain_port;
	char	   *es_port;
	const char *hint = "Copy the Cloud ID from the deployment's page in the Elastic Cloud console: a name, a colon, then base64 text.";

	if (colon == NULL || colon == value || encoded_len == 0)
		option_error(def, "A Cloud ID is a deployment's name, a colon and base64 text.", hint);
	len = compat_b64_decode(encoded, encoded_len, decoded, max_len);
	if (len <= 0)
		option_error(def, "The text after the colon is not base64.", hint);
	decoded[len] = '\0';
	if (strlen(decoded) != len)
		option_error(def, "The decoded Cloud ID is not text.", hint);
	domain = decoded;
	dollar = strchr(domain, '$');
	if (dollar == NULL)
		option_error(def, "The decoded Cloud ID names no Elasticsearch deployment (no '$' after its domain).", hint);
	*dollar = '\0';
	es_id = dollar + 1;
	if ((dollar = strchr(es_id, '$')) != NULL)
		*dollar = '\0';
	if (!split_host_port(domain, &domain_port) || !split_host_port(es_id, &es_port))
		option_error(def, "The decoded Cloud ID does not name a host and port.", hint);
	return psprintf("https://%s.%s:%s", es_id, domain,
					es_port ? es_port : domain_port ? domain_port : "443");
}

static void
check_value(const DefElem *def, const OptionSpec *spec)
{
	char	   *value = defGetString((DefElem *) def);

	/*
	 * Values end up in HTTP headers (credentials, a session token), URLs and
	 * file names: a line break would end a header and start another.
	 */
	for (const char *c = value; *c; c++)
	{
		if ((unsigned char) *c < 0x20 || *c == 0x7f)
			option_error(def, "It must not contain control characters, such as a line break or a tab.",
						 NULL);
	}

	switch (spec->kind)
	{
		case OPTION_URL:
			check_url(def, value);
			break;
		case OPTION_PREFIX:
			check_prefix(def, value);
			break;
		case OPTION_BOOL:
			(void) defGetBoolean((DefElem *) def);
			break;
		case OPTION_INT:
			check_int(def, spec, value);
			break;
		case OPTION_FILE:
			check_file(def, value);
			break;
		case OPTION_WORD:
			check_word(def, value);
			break;
		case OPTION_CLOUD_ID:
			(void) cloud_id_url(def, value);
			break;
		case OPTION_TOKEN:
			check_token(def, value);
			break;
		case OPTION_TEXT:
			if (value[0] == '\0')
				option_error(def, "It must not be empty.", NULL);
			break;
	}
}

static bool
has_option(List *list, const char *name)
{
	ListCell   *lc;

	foreach(lc, list)
	{
		if (strcmp(((DefElem *) lfirst(lc))->defname, name) == 0)
			return true;
	}
	return false;
}

static void
require_pair(List *list, const char *a, const char *b)
{
	if (has_option(list, a) && !has_option(list, b))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("option \"%s\" of " OPENSEARCH_FDW " needs option \"%s\"", a, b)));
}

/* A user mapping authenticates one way, or none. */
static void
check_one_auth_method(List *list)
{
	int			first = -1;

	for (int i = 0; i < lengthof(auth_methods); i++)
	{
		if (!has_option(list, auth_methods[i][0]))
			continue;
		if (first >= 0)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("a user mapping of " OPENSEARCH_FDW " authenticates one way"),
					 errdetail("It gives %s and %s.", auth_methods[first][1], auth_methods[i][1]),
					 errhint("Keep the options of one of them: ALTER USER MAPPING ... OPTIONS (DROP ...);")));
		first = i;
	}
}

/*
 * flusso_opensearch_validator(options text[], catalog oid): every option
 * known where it is set and well formed, and the ones that go together
 * set together.
 */
Datum
flusso_opensearch_validator(PG_FUNCTION_ARGS)
{
	List	   *list = untransformRelOptions(PG_GETARG_DATUM(0));
	Oid			catalog = PG_GETARG_OID(1);
	ListCell   *lc;

	foreach(lc, list)
	{
		DefElem    *def = lfirst(lc);
		const OptionSpec *spec = NULL;

		for (int i = 0; i < lengthof(options); i++)
		{
			if (strcmp(options[i].name, def->defname) == 0 && options[i].catalog == catalog)
				spec = &options[i];
		}
		if (spec == NULL)
		{
			StringInfoData valid;

			initStringInfo(&valid);
			for (int i = 0; i < lengthof(options); i++)
			{
				if (options[i].catalog == catalog)
					appendStringInfo(&valid, "%s%s", valid.len ? ", " : "", options[i].name);
			}
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
					 errmsg("invalid option \"%s\" for a " OPENSEARCH_FDW " %s",
							def->defname, catalog_name(catalog)),
					 valid.len ? errhint("Valid options here are: %s.", valid.data)
					 : errhint("The wrapper takes no options; its servers and user mappings do.")));
		}
		check_value(def, spec);
	}
	if (catalog == ForeignServerRelationId && !has_option(list, "url") &&
		!has_option(list, "cloud_id"))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("a " OPENSEARCH_FDW " server needs option \"url\" or option \"cloud_id\""),
				 errhint("CREATE SERVER search FOREIGN DATA WRAPPER " OPENSEARCH_FDW " OPTIONS (url 'https://search.example.com:9200'); for an Elastic Cloud deployment, OPTIONS (cloud_id '...').")));
	if (has_option(list, "url") && has_option(list, "cloud_id"))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("a " OPENSEARCH_FDW " server takes option \"url\" or option \"cloud_id\", not both"),
				 errdetail("A Cloud ID names the deployment's URL."),
				 errhint("Drop one of them: ALTER SERVER ... OPTIONS (DROP url);")));
	check_one_auth_method(list);
	require_pair(list, "password", "user");
	require_pair(list, "user", "password");
	require_pair(list, "aws_access_key_id", "aws_secret_access_key");
	require_pair(list, "aws_secret_access_key", "aws_access_key_id");
	require_pair(list, "aws_session_token", "aws_access_key_id");
	require_pair(list, "api_key_id", "api_key");
	require_pair(list, "client_key", "client_cert");
	PG_RETURN_VOID();
}

static char *
option(List *list, const char *name, const char *otherwise)
{
	ListCell   *lc;

	foreach(lc, list)
	{
		DefElem    *def = lfirst(lc);

		if (strcmp(def->defname, name) == 0)
			return pstrdup(defGetString(def));
	}
	return otherwise ? pstrdup(otherwise) : NULL;
}

/* The options of the user mapping of role on the server, or PUBLIC's. */
static List *
mapping_options(Oid role, Oid serverid, bool *found)
{
	Oid			roles[2] = {role, InvalidOid};

	for (int i = 0; i < 2; i++)
	{
		HeapTuple	tuple = SearchSysCache2(USERMAPPINGUSERSERVER,
											ObjectIdGetDatum(roles[i]),
											ObjectIdGetDatum(serverid));

		if (HeapTupleIsValid(tuple))
		{
			bool		isnull;
			Datum		datum = SysCacheGetAttr(USERMAPPINGUSERSERVER, tuple,
												Anum_pg_user_mapping_umoptions, &isnull);
			List	   *list = isnull ? NIL : untransformRelOptions(datum);

			ReleaseSysCache(tuple);
			*found = true;
			return list;
		}
	}
	*found = false;
	return NIL;
}

/*
 * The nodes of a url, but its http ones when it names https ones too: a
 * server made before such a url was refused (check_url) never sends its
 * credentials in clear text.  *left_out lists those left out, or is NULL.
 */
static List *
keep_one_scheme(List *urls, char **left_out)
{
	List	   *kept = NIL;
	StringInfoData out;
	ListCell   *lc;

	*left_out = NULL;
	foreach(lc, urls)
	{
		if (pg_strncasecmp(lfirst(lc), "https://", 8) == 0)
			kept = lappend(kept, lfirst(lc));
	}
	if (kept == NIL || list_length(kept) == list_length(urls))
		return urls;
	initStringInfo(&out);
	foreach(lc, urls)
	{
		if (!list_member_ptr(kept, lfirst(lc)))
			appendStringInfo(&out, "%s%s", out.len > 0 ? ", " : "", (char *) lfirst(lc));
	}
	*left_out = out.data;
	return kept;
}

/* An API key given as its two halves, encoded as Elasticsearch does: base64(id:key). */
static char *
encode_api_key(const char *id, const char *key)
{
	char	   *plain = psprintf("%s:%s", id, key);
	int			plain_len = strlen(plain);
	int			max_len = pg_b64_enc_len(plain_len);
	char	   *encoded = palloc(max_len + 1);
	int			len = compat_b64_encode(plain, plain_len, encoded, max_len);

	if (len < 0)
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("could not encode an API key")));
	encoded[len] = '\0';
	explicit_bzero(plain, plain_len);
	pfree(plain);
	return encoded;
}

/*
 * The server named server_name, which must be a flusso_opensearch server,
 * with the credentials of role's user mapping (or PUBLIC's).  NULL when
 * there is no such server and missing_ok.
 */
OpenSearchServer *
os_server_load(const char *server_name, Oid role, bool missing_ok)
{
	ForeignServer *fs = GetForeignServerByName(server_name, missing_ok);
	ForeignDataWrapper *fdw;
	OpenSearchServer *server;
	List	   *mapping;
	char	   *url;
	List	   *nodes;

	if (fs == NULL)
		return NULL;
	fdw = GetForeignDataWrapper(fs->fdwid);
	if (strcmp(fdw->fdwname, OPENSEARCH_FDW) != 0)
	{
		if (missing_ok)
			return NULL;
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("server \"%s\" is not a " OPENSEARCH_FDW " server", server_name),
				 errdetail("It belongs to foreign-data wrapper \"%s\".", fdw->fdwname)));
	}
	server = palloc0(sizeof(OpenSearchServer));
	server->name = pstrdup(fs->servername);
	server->serverid = fs->serverid;
	server->role = role;
	url = option(fs->options, "url", NULL);
	if (url == NULL)
	{
		DefElem    *cloud_id = makeDefElem("cloud_id",
										   (Node *) makeString(option(fs->options, "cloud_id", "")), -1);

		url = cloud_id_url(cloud_id, strVal(cloud_id->arg));
	}
	server->url = url;
	nodes = keep_one_scheme(split_urls(url), &server->nodes_left_out);
	server->nnodes = list_length(nodes);
	server->nodes = palloc(sizeof(char *) * server->nnodes);
	for (int i = 0; i < server->nnodes; i++)
		server->nodes[i] = list_nth(nodes, i);
	server->index_prefix = option(fs->options, "index_prefix", "");
	server->ca_file = option(fs->options, "ca_file", NULL);
	server->client_cert = option(fs->options, "client_cert", NULL);
	server->client_key = option(fs->options, "client_key", NULL);
	if (!parse_bool(option(fs->options, "tls_verify", "true"), &server->tls_verify))
		server->tls_verify = true;
	server->aws_region = option(fs->options, "aws_region", NULL);
	server->aws_service = option(fs->options, "aws_service", "es");
	server->connect_timeout = atoi(option(fs->options, "connect_timeout", "10"));
	server->request_timeout = atoi(option(fs->options, "request_timeout", "60"));
	server->bulk_max_documents = atoi(option(fs->options, "bulk_max_documents", "1000"));
	server->bulk_max_bytes = atoi(option(fs->options, "bulk_max_bytes", "5242880"));
	server->bulks_in_flight = atoi(option(fs->options, "bulks_in_flight", "2"));

	mapping = mapping_options(role, fs->serverid, &server->has_mapping);
	server->user = option(mapping, "user", NULL);
	server->password = option(mapping, "password", NULL);
	server->aws_access_key_id = option(mapping, "aws_access_key_id", NULL);
	server->aws_secret_access_key = option(mapping, "aws_secret_access_key", NULL);
	server->aws_session_token = option(mapping, "aws_session_token", NULL);
	server->api_key = option(mapping, "api_key", NULL);
	if (server->api_key && has_option(mapping, "api_key_id"))
		server->api_key = encode_api_key(option(mapping, "api_key_id", NULL), server->api_key);
	server->bearer_token = option(mapping, "bearer_token", NULL);
	return server;
}

/* May role ship documents through the server (USAGE on it)? */
bool
os_server_usable_by(const char *server_name, Oid role)
{
	ForeignServer *fs = GetForeignServerByName(server_name, true);

	return fs != NULL && compat_foreign_server_aclcheck(fs->serverid, role, ACL_USAGE) == ACLCHECK_OK;
}

/*-------------------------------------------------------------------------
 *
 * json.c
 *	  Reading OpenSearch's JSON responses with PostgreSQL's own parser: a
 *	  response is checked by the non-throwing parser first (its nesting
 *	  counted before, since the parsers recurse), then turned into jsonb,
 *	  whose containers are read by key; numbers are read without the casts
 *	  that raise when a value does not fit.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "opensearch/json.h"
#include "schema/jsonapi_compat.h"

/*
 * Does text nest deeper than OS_JSON_MAX_DEPTH?  PostgreSQL's parsers
 * recurse once per level and raise "stack depth limit exceeded" beyond
 * what max_stack_depth allows: the nesting is counted first, outside
 * strings, without recursing.
 */
static bool
too_deep(const char *text)
{
	int			depth = 0;
	bool		in_string = false;

	for (const char *p = text; *p; p++)
	{
		if (in_string)
		{
			if (*p == '\\' && p[1] != '\0')
				p++;
			else if (*p == '"')
				in_string = false;
		}
		else if (*p == '"')
			in_string = true;
		else if (*p == '[' || *p == '{')
		{
			if (++depth > OS_JSON_MAX_DEPTH)
				return true;
		}
		else if (*p == ']' || *p == '}')
			depth--;
	}
	return false;
}

/*
 * The response as jsonb, or NULL when it is empty, not well-formed JSON
 * (as jsonb takes it: no \u0000, no lone surrogate) or nested deeper than
 * OS_JSON_MAX_DEPTH; then *problem, when asked for, says which, in words
 * that quote nothing of the response.
 */
Jsonb *
os_json_read(const char *text, const char **problem)
{
	JsonLexContext *lex;
	JsonSemAction sem;
	const char *dummy;

	if (problem == NULL)
		problem = &dummy;
	if (text == NULL || text[0] == '\0')
	{
		*problem = "it is empty";
		return NULL;
	}
	if (too_deep(text))
	{
		*problem = psprintf("it nests more than %d levels deep", OS_JSON_MAX_DEPTH);
		return NULL;
	}
	memset(&sem, 0, sizeof(sem));
	lex = compat_json_lex_context((char *) text, strlen(text), GetDatabaseEncoding());
	if (pg_parse_json(lex, &sem) != JSON_SUCCESS)
	{
		*problem = "it is not JSON";
		return NULL;
	}
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
}

/* The response as jsonb, or NULL when os_json_read() finds a problem. */
Jsonb *
os_json_parse(const char *text)
{
	return os_json_read(text, NULL);
}

static JsonbValue *
member(JsonbContainer *object, const char *key)
{
	if (object == NULL || !JsonContainerIsObject(object))
		return NULL;
	return getKeyJsonValueFromContainer(object, key, strlen(key), NULL);
}

/* The object or array under key, or NULL. */
JsonbContainer *
os_json_object(JsonbContainer *object, const char *key)
{
	JsonbValue *v = member(object, key);

	return v && v->type == jbvBinary ? v->val.binary.data : NULL;
}

/* The string under key, or NULL. */
char *
os_json_text(JsonbContainer *object, const char *key)
{
	JsonbValue *v = member(object, key);

	return v && v->type == jbvString ? pnstrdup(v->val.string.val, v->val.string.len) : NULL;
}

/*
 * The whole number under key; false when there is none, or when it is not
 * a whole number within int64 (1e30 is JSON, and no status).
 */
bool
os_json_number(JsonbContainer *object, const char *key, int64 *out)
{
	JsonbValue *v = member(object, key);
	char	   *digits;
	char	   *end;

	if (v == NULL || v->type != jbvNumeric)
		return false;
	/* numeric_int8() raises on what does not fit: read its text instead */
	digits = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric)));
	errno = 0;
	*out = strtoi64(digits, &end, 10);
	return errno == 0 && end != digits && *end == '\0';
}

/*
 * The type of the error an error response carries ("error": {"type": ...}),
 * or NULL.  Never its reason, which may quote a document's values.
 */
char *
os_json_error_type(const char *response)
{
	Jsonb	   *doc = os_json_parse(response);
	JsonbContainer *error;

	if (doc == NULL)
		return NULL;
	error = os_json_object(&doc->root, "error");
	return error ? os_json_text(error, "type") : os_json_text(&doc->root, "error");
}

/*
 * The reason of the error an error response carries, with the reason of
 * its first suppressed error when it has one (3.x says "Failed to build
 * analyzers: [a]" and why in suppressed[]), or NULL.  Only for answers
 * that quote no document: an index's creation, whose reasons quote its
 * mapping and settings.
 */
char *
os_json_error_reason(const char *response)
{
	Jsonb	   *doc = os_json_parse(response);
	JsonbContainer *error = doc ? os_json_object(&doc->root, "error") : NULL;
	char	   *reason = error ? os_json_text(error, "reason") : NULL;
	JsonbValue *suppressed;
	JsonbValue *first;
	char	   *cause;

	if (reason == NULL)
		return NULL;
	suppressed = getKeyJsonValueFromContainer(error, "suppressed", strlen("suppressed"), NULL);
	if (suppressed == NULL || suppressed->type != jbvBinary ||
		!JsonContainerIsArray(suppressed->val.binary.data))
		return reason;
	first = getIthJsonbValueFromContainer(suppressed->val.binary.data, 0);
	if (first == NULL || first->type != jbvBinary)
		return reason;
	cause = os_json_text(first->val.binary.data, "reason");
	return cause ? psprintf("%s (%s)", reason, cause) : reason;
}

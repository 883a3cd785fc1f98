/*-------------------------------------------------------------------------
 *
 * json.c
 *	  Reading OpenSearch's JSON responses with PostgreSQL's own parser: a
 *	  response is checked by the non-throwing parser first, then turned
 *	  into jsonb, whose containers are read by key.
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

/* The response as jsonb, or NULL when it is not well-formed JSON. */
Jsonb *
os_json_parse(const char *text)
{
	JsonLexContext *lex;
	JsonSemAction sem;

	if (text == NULL || text[0] == '\0')
		return NULL;
	memset(&sem, 0, sizeof(sem));
	lex = compat_json_lex_context((char *) text, strlen(text), GetDatabaseEncoding());
	if (pg_parse_json(lex, &sem) != JSON_SUCCESS)
		return NULL;
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
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

/* The whole number under key; false when there is none. */
bool
os_json_number(JsonbContainer *object, const char *key, int64 *out)
{
	JsonbValue *v = member(object, key);

	if (v == NULL || v->type != jbvNumeric)
		return false;
	*out = DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(v->val.numeric)));
	return true;
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

/*-------------------------------------------------------------------------
 *
 * read.c
 *	  Typed, path-aware reads from a SchemaValue mapping.
 *
 * Paths use the notation of every schema error: keys joined with dots, list
 * items by 0-based index, fields labelled with their type and name, e.g.
 * "fields[4] (has_many reviews).filters[0].op".
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifdef FRONTEND
#include "postgres_fe.h"
#else
#include "postgres.h"
#endif

#include <ctype.h>
#include <limits.h>

#include "schema/read.h"

#define IDENTIFIER_HINT \
	"Table, column and schema names must match ^[a-z_][a-z0-9_]*$ and have at most 63 characters (they are trimmed and lower-cased first)."
#define FIELD_NAME_HINT \
	"Field names must match ^[a-zA-Z_][a-zA-Z0-9_]*$ and have at most 63 characters."

char *
path_key(const char *path, const char *key)
{
	if (path == NULL || path[0] == '\0')
		return pstrdup(key);
	return psprintf("%s.%s", path, key);
}

char *
path_item(const char *path, int index)
{
	return psprintf("%s[%d]", path ? path : "", index);
}

/* Record "expected X, found Y" for value at path. */
void
wrong_kind(ReadContext *cx, const SchemaValue *value, const char *path,
		   const char *expected)
{
	if (cx->error)
		return;
	if (value->kind == SV_STRING)
		cx->error = schema_error(path, NULL, "expected %s, found a string (\"%s\")",
								 expected, value->str);
	else if (value->kind == SV_SEQUENCE || value->kind == SV_MAPPING || value->kind == SV_NULL)
		cx->error = schema_error(path, NULL, "expected %s, found %s",
								 expected, schema_value_kind_name(value->kind));
	else
		cx->error = schema_error(path, NULL, "expected %s, found %s (%s)",
								 expected, schema_value_kind_name(value->kind), value->str);
}

bool
read_mapping(ReadContext *cx, const SchemaValue *value, const char *path)
{
	if (cx->error)
		return false;
	if (value->kind != SV_MAPPING)
	{
		wrong_kind(cx, value, path, "a mapping");
		return false;
	}
	return true;
}

bool
read_list(ReadContext *cx, const SchemaValue *value, const char *path)
{
	if (cx->error)
		return false;
	if (value->kind != SV_SEQUENCE)
	{
		wrong_kind(cx, value, path, "a list");
		return false;
	}
	return true;
}

/* Every key of mapping must be in allowed (NULL-terminated). */
void
read_check_keys(ReadContext *cx, const SchemaValue *mapping, const char *path,
				const char *const *allowed)
{
	if (cx->error)
		return;
	for (int i = 0; i < mapping->nitems; i++)
	{
		const char *key = mapping->keys[i];
		const char *suggestion;
		bool		known = false;

		for (const char *const *a = allowed; *a; a++)
		{
			if (strcmp(key, *a) == 0)
				known = true;
		}
		if (known)
			continue;

		suggestion = schema_suggest(key, allowed);
		if (suggestion)
			cx->error = schema_error(path, psprintf("Did you mean \"%s\"?", suggestion),
									 "unknown key \"%s\"", key);
		else
			cx->error = schema_error(path, psprintf("Allowed keys here: %s.",
													schema_join_words(allowed)),
									 "unknown key \"%s\"", key);
		return;
	}
}

const SchemaValue *
read_required(ReadContext *cx, const SchemaValue *mapping, const char *path,
			  const char *key, const char *hint)
{
	const SchemaValue *value;

	if (cx->error)
		return NULL;
	value = schema_value_get(mapping, key);
	if (value == NULL)
		cx->error = schema_error(path, hint, "missing key \"%s\"", key);
	return value;
}

/*
 * The value under key, or NULL: when absent (an error when required), or
 * after an error.
 */
static const SchemaValue *
read_key(ReadContext *cx, const SchemaValue *mapping, const char *path,
		 const char *key, bool required)
{
	if (cx->error)
		return NULL;
	return required ? read_required(cx, mapping, path, key, NULL)
		: schema_value_get(mapping, key);
}

/* A string under key; NULL when absent (an error when required). */
char *
read_string(ReadContext *cx, const SchemaValue *mapping, const char *path,
			const char *key, bool required)
{
	const SchemaValue *value = read_key(cx, mapping, path, key, required);

	if (value == NULL)
		return NULL;
	if (value->kind != SV_STRING)
	{
		wrong_kind(cx, value, path_key(path, key), "a string");
		return NULL;
	}
	return value->str;
}

/* Trim ASCII white space from both ends, into a new string. */
static char *
trimmed(const char *s)
{
	const char *end = s + strlen(s);

	while (*s && isspace((unsigned char) *s))
		s++;
	while (end > s && isspace((unsigned char) end[-1]))
		end--;
	return pnstrdup(s, end - s);
}

/* A table, column or schema name: trimmed, lower-cased and checked. */
char *
read_identifier_value(ReadContext *cx, const SchemaValue *value, const char *path)
{
	char	   *name;

	if (cx->error)
		return NULL;
	if (value->kind != SV_STRING)
	{
		wrong_kind(cx, value, path, "a name");
		return NULL;
	}
	name = trimmed(value->str);
	for (char *p = name; *p; p++)
		*p = (char) pg_ascii_tolower((unsigned char) *p);
	if (!schema_valid_identifier(name))
	{
		cx->error = schema_error(path, IDENTIFIER_HINT,
								 "invalid identifier \"%s\"", value->str);
		return NULL;
	}
	return name;
}

char *
read_identifier(ReadContext *cx, const SchemaValue *mapping, const char *path,
				const char *key, bool required)
{
	const SchemaValue *value = read_key(cx, mapping, path, key, required);

	if (value == NULL)
		return NULL;
	return read_identifier_value(cx, value, path_key(path, key));
}

/* A document key: trimmed, case kept, checked. */
char *
read_field_name(ReadContext *cx, const SchemaValue *value, const char *path)
{
	char	   *name;

	if (cx->error)
		return NULL;
	if (value->kind != SV_STRING)
	{
		wrong_kind(cx, value, path, "a field name");
		return NULL;
	}
	name = trimmed(value->str);
	if (!schema_valid_field_name(name))
	{
		cx->error = schema_error(path, FIELD_NAME_HINT,
								 "invalid field name \"%s\"", value->str);
		return NULL;
	}
	return name;
}

/* A boolean under key; returns whether it was present. */
bool
read_bool(ReadContext *cx, const SchemaValue *mapping, const char *path,
		  const char *key, bool *result)
{
	const SchemaValue *value;

	if (cx->error)
		return false;
	value = schema_value_get(mapping, key);
	if (value == NULL)
		return false;
	if (value->kind != SV_BOOL)
	{
		wrong_kind(cx, value, path_key(path, key), "true or false");
		return false;
	}
	*result = strcmp(value->str, "true") == 0;
	return true;
}

/* An integer under key; returns whether it was present. */
bool
read_int(ReadContext *cx, const SchemaValue *mapping, const char *path,
		 const char *key, int *result)
{
	const SchemaValue *value;
	char	   *end;
	long		v;

	if (cx->error)
		return false;
	value = schema_value_get(mapping, key);
	if (value == NULL)
		return false;
	if (value->kind != SV_INT)
	{
		wrong_kind(cx, value, path_key(path, key), "an integer");
		return false;
	}
	errno = 0;
	v = strtol(value->str, &end, 10);
	if (errno != 0 || *end != '\0' || v < INT_MIN || v > INT_MAX)
	{
		cx->error = schema_error(path_key(path, key), NULL,
								 "integer %s is out of range", value->str);
		return false;
	}
	*result = (int) v;
	return true;
}

/* A scalar type name under key; returns whether it was present. */
bool
read_scalar_type(ReadContext *cx, const SchemaValue *mapping, const char *path,
				 const char *key, ScalarType *type)
{
	char	   *name = read_string(cx, mapping, path, key, false);
	const char *suggestion;

	if (name == NULL)
		return false;
	if (schema_type_from_name(name, type))
		return true;
	suggestion = schema_suggest(name, scalar_type_names);
	cx->error = schema_error(path_key(path, key),
							 suggestion ? psprintf("Did you mean \"%s\"?", suggestion)
							 : psprintf("Types are: %s.", schema_join_words(scalar_type_names)),
							 "unknown type \"%s\"", name);
	return false;
}

/* The text of a scalar (a filter value): strings as is, numbers, booleans. */
char *
read_scalar_text(ReadContext *cx, const SchemaValue *value, const char *path)
{
	if (cx->error)
		return NULL;
	switch (value->kind)
	{
		case SV_STRING:
		case SV_INT:
		case SV_FLOAT:
		case SV_BOOL:
			return value->str;
		case SV_NULL:
			cx->error = schema_error(path, "To match missing values use op: is_null.",
									 "a filter value cannot be null");
			return NULL;
		default:
			wrong_kind(cx, value, path, "a single value");
			return NULL;
	}
}

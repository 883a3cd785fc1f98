/*-------------------------------------------------------------------------
 *
 * value.c
 *	  The SchemaValue tree: construction, lookup, JSON output,
 *	  number spelling and error construction.
 *
 * Everything that reads or writes the generic tree lives here; what the tree
 * means is the business of model.c and fields.c.
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
#include <math.h>

#include "common/shortest_dec.h"
#include "schema/value.h"

SchemaValue *
schema_value_new(SchemaValueKind kind, int line, int column)
{
	SchemaValue *value = palloc0(sizeof(SchemaValue));

	value->kind = kind;
	value->line = line;
	value->column = column;
	value->weight = 1;
	return value;
}

SchemaValue *
schema_value_string(const char *str)
{
	SchemaValue *value = schema_value_new(SV_STRING, 0, 0);

	value->str = pstrdup(str);
	return value;
}

/*
 * Append an item to a sequence (key NULL) or a mapping.  Duplicate keys are
 * the readers' business; this does not check.
 */
void
schema_value_append(SchemaValue *container, const char *key, SchemaValue *item)
{
	Assert(container->kind == SV_SEQUENCE || container->kind == SV_MAPPING);

	if (container->nitems == container->capacity)
	{
		container->capacity = container->capacity ? container->capacity * 2 : 4;
		if (container->items == NULL)
		{
			container->items = palloc(sizeof(SchemaValue *) * container->capacity);
			container->keys = palloc(sizeof(char *) * container->capacity);
		}
		else
		{
			container->items = repalloc(container->items,
										sizeof(SchemaValue *) * container->capacity);
			container->keys = repalloc(container->keys,
									   sizeof(char *) * container->capacity);
		}
	}
	container->keys[container->nitems] = key ? pstrdup(key) : NULL;
	container->items[container->nitems] = item;
	container->nitems++;
	container->weight += item->weight;
}

SchemaValue *
schema_value_get(const SchemaValue *mapping, const char *key)
{
	if (mapping == NULL || mapping->kind != SV_MAPPING)
		return NULL;
	for (int i = 0; i < mapping->nitems; i++)
	{
		if (strcmp(mapping->keys[i], key) == 0)
			return mapping->items[i];
	}
	return NULL;
}

/* Replace the value under key, or append it when the key is new. */
void
schema_value_set(SchemaValue *mapping, const char *key, SchemaValue *item)
{
	Assert(mapping->kind == SV_MAPPING);
	for (int i = 0; i < mapping->nitems; i++)
	{
		if (strcmp(mapping->keys[i], key) == 0)
		{
			mapping->items[i] = item;
			return;
		}
	}
	schema_value_append(mapping, key, item);
}

/* Shorthands for building trees in C: canonical form and mapping. */
SchemaValue *
schema_value_mapping(void)
{
	return schema_value_new(SV_MAPPING, 0, 0);
}

void
schema_put_string(SchemaValue *mapping, const char *key, const char *str)
{
	schema_value_set(mapping, key, schema_value_string(str));
}

void
schema_put_bool(SchemaValue *mapping, const char *key, bool b)
{
	SchemaValue *value = schema_value_new(SV_BOOL, 0, 0);

	value->str = b ? "true" : "false";
	schema_value_set(mapping, key, value);
}

void
schema_put_int(SchemaValue *mapping, const char *key, int i)
{
	SchemaValue *value = schema_value_new(SV_INT, 0, 0);

	value->str = psprintf("%d", i);
	schema_value_set(mapping, key, value);
}

/* A sequence of strings. */
SchemaValue *
schema_string_list(char **items, int nitems)
{
	SchemaValue *list = schema_value_new(SV_SEQUENCE, 0, 0);

	for (int i = 0; i < nitems; i++)
		schema_value_append(list, NULL, schema_value_string(items[i]));
	return list;
}

const char *
schema_value_kind_name(SchemaValueKind kind)
{
	switch (kind)
	{
		case SV_NULL:
			return "null";
		case SV_BOOL:
			return "a boolean";
		case SV_INT:
			return "an integer";
		case SV_FLOAT:
			return "a number";
		case SV_STRING:
			return "a string";
		case SV_SEQUENCE:
			return "a list";
		case SV_MAPPING:
			return "a mapping";
	}
	return "a value";
}

/* Append str to buf as a JSON string literal. */
void
schema_json_string(StringInfo buf, const char *str)
{
	appendStringInfoCharMacro(buf, '"');
	for (const unsigned char *p = (const unsigned char *) str; *p; p++)
	{
		switch (*p)
		{
			case '"':
				appendStringInfoString(buf, "\\\"");
				break;
			case '\\':
				appendStringInfoString(buf, "\\\\");
				break;
			case '\b':
				appendStringInfoString(buf, "\\b");
				break;
			case '\f':
				appendStringInfoString(buf, "\\f");
				break;
			case '\n':
				appendStringInfoString(buf, "\\n");
				break;
			case '\r':
				appendStringInfoString(buf, "\\r");
				break;
			case '\t':
				appendStringInfoString(buf, "\\t");
				break;
			default:
				if (*p < 0x20)
					appendStringInfo(buf, "\\u%04x", (int) *p);
				else
					appendStringInfoCharMacro(buf, (char) *p);
				break;
		}
	}
	appendStringInfoCharMacro(buf, '"');
}

static int
compare_key_index(const void *a, const void *b, void *arg)
{
	const SchemaValue *mapping = (const SchemaValue *) arg;

	return strcmp(mapping->keys[*(const int *) a], mapping->keys[*(const int *) b]);
}

/*
 * Write value as JSON text.  With sort_keys, mapping keys come out in byte
 * order, so that two trees with the same content always print the same text.
 */
void
schema_value_to_json(StringInfo buf, const SchemaValue *value, bool sort_keys)
{
	switch (value->kind)
	{
		case SV_NULL:
			appendStringInfoString(buf, "null");
			break;
		case SV_BOOL:
		case SV_INT:
		case SV_FLOAT:
			appendStringInfoString(buf, value->str);
			break;
		case SV_STRING:
			schema_json_string(buf, value->str);
			break;
		case SV_SEQUENCE:
			appendStringInfoCharMacro(buf, '[');
			for (int i = 0; i < value->nitems; i++)
			{
				if (i > 0)
					appendStringInfoString(buf, ", ");
				schema_value_to_json(buf, value->items[i], sort_keys);
			}
			appendStringInfoCharMacro(buf, ']');
			break;
		case SV_MAPPING:
			{
				int		   *order = palloc(sizeof(int) * Max(value->nitems, 1));

				for (int i = 0; i < value->nitems; i++)
					order[i] = i;
				if (sort_keys)
					qsort_arg(order, value->nitems, sizeof(int),
							  compare_key_index, (void *) value);

				appendStringInfoCharMacro(buf, '{');
				for (int i = 0; i < value->nitems; i++)
				{
					if (i > 0)
						appendStringInfoString(buf, ", ");
					schema_json_string(buf, value->keys[order[i]]);
					appendStringInfoString(buf, ": ");
					schema_value_to_json(buf, value->items[order[i]], sort_keys);
				}
				appendStringInfoCharMacro(buf, '}');
				pfree(order);
			}
			break;
	}
}

/* Spell a decimal integer literal without sign noise or leading zeros. */
static char *
normalize_decimal_integer(const char *literal)
{
	bool		negative = false;
	const char *digits = literal;

	if (*digits == '+' || *digits == '-')
		negative = (*digits++ == '-');
	while (digits[0] == '0' && digits[1] != '\0')
		digits++;
	if (strcmp(digits, "0") == 0)
		negative = false;
	return psprintf("%s%s", negative ? "-" : "", digits);
}

static bool
all_chars(const char *s, const char *allowed)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
	{
		if (strchr(allowed, *s) == NULL)
			return false;
	}
	return true;
}

/*
 * Does literal spell a number under the YAML 1.2 core schema (which covers
 * JSON's numbers)?  If so return true and set *normalized to its canonical
 * JSON spelling; *normalized stays NULL for a float, since the caller
 * distinguishes integers by integer_only.  Returns false for anything else,
 * including infinities and NaN, which JSON cannot represent and which the
 * readers therefore keep as strings.
 *
 * With integer_only, only integer literals (decimal, 0o octal, 0x hex) match.
 */
bool
schema_number_text(const char *literal, bool integer_only, char **normalized)
{
	const char *body = literal;
	const char *p;
	bool		seen_digit = false;
	char		buf[DOUBLE_SHORTEST_DECIMAL_LEN];
	double		d;
	char	   *end;

	*normalized = NULL;

	if (strncmp(literal, "0o", 2) == 0 || strncmp(literal, "0x", 2) == 0)
	{
		bool		octal = literal[1] == 'o';
		unsigned long long v;

		if (!all_chars(literal + 2, octal ? "01234567" : "0123456789abcdefABCDEF"))
			return false;
		errno = 0;
		v = strtoull(literal + 2, &end, octal ? 8 : 16);
		if (errno != 0 || *end != '\0')
			return false;
		*normalized = psprintf("%llu", v);
		return true;
	}

	if (*body == '+' || *body == '-')
		body++;
	if (all_chars(body, "0123456789"))
	{
		*normalized = normalize_decimal_integer(literal);
		return true;
	}
	if (integer_only)
		return false;

	/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
	p = body;
	while (isdigit((unsigned char) *p))
		p++, seen_digit = true;
	if (*p == '.')
	{
		p++;
		while (isdigit((unsigned char) *p))
			p++, seen_digit = true;
	}
	if (!seen_digit)
		return false;
	if (*p == 'e' || *p == 'E')
	{
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char) *p))
			return false;
		while (isdigit((unsigned char) *p))
			p++;
	}
	if (*p != '\0')
		return false;

	errno = 0;
	d = strtod(literal, &end);
	if (*end != '\0' || isinf(d) || isnan(d))
		return false;
	double_to_shortest_decimal_buf(d, buf);
	*normalized = pstrdup(buf);
	return true;
}

/* Format a message into a palloc'd string (a psprintf taking a va_list). */
char *
schema_vformat(const char *fmt, va_list args)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (;;)
	{
		va_list		copy;
		int			needed;

		va_copy(copy, args);
		needed = appendStringInfoVA(&buf, fmt, copy);
		va_end(copy);
		if (needed == 0)
			break;
		enlargeStringInfo(&buf, needed);
	}
	return buf.data;
}

/* An error in what the definition says, at path. */
SchemaError *
schema_error(const char *path, const char *hint, const char *fmt,...)
{
	SchemaError *error = palloc0(sizeof(SchemaError));
	va_list		args;

	va_start(args, fmt);
	error->message = schema_vformat(fmt, args);
	va_end(args);
	error->path = pstrdup(path ? path : "");
	error->hint = hint ? pstrdup(hint) : NULL;
	return error;
}

/* An error in how the definition is written, at a position in the input. */
SchemaError *
schema_syntax_error(int line, int column, const char *fmt,...)
{
	SchemaError *error = palloc0(sizeof(SchemaError));
	va_list		args;

	va_start(args, fmt);
	error->message = schema_vformat(fmt, args);
	va_end(args);
	error->syntax = true;
	error->path = psprintf("line %d, column %d", line, column);
	return error;
}

/*-------------------------------------------------------------------------
 *
 * json_reader.c
 *	  Reads a JSON definition into a SchemaValue tree with PostgreSQL's own
 *	  JSON parser (common/jsonapi.h), and picks YAML or JSON for an input.
 *
 * jsonapi is used rather than jsonb because jsonb silently keeps the last of
 * two equal keys, while a definition that names a key twice is an error.  The
 * parser recurses, so the input's nesting is measured before it runs.
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

#include "common/jsonapi.h"
#include "mb/pg_wchar.h"
#include "schema/builder.h"
#include "schema/jsonapi_compat.h"

typedef struct JsonReader
{
	TreeBuilder builder;
	JsonLexContext *lex;
	int			value_line;		/* where the next value starts */
	int			value_column;
} JsonReader;

static void
current_position(JsonLexContext *lex, int *line, int *column)
{
	const char *at = lex->token_start ? lex->token_start : lex->input;

	*line = lex->line_number;
	*column = (int) (at - lex->line_start) + 1;
	if (*column < 1)
		*column = 1;
}

static json_action_result
on_object_start(void *state)
{
	JsonReader *reader = state;
	int			line,
				column;

	current_position(reader->lex, &line, &column);
	builder_open(&reader->builder, SV_MAPPING, line, column);
	JSON_ACTION_DONE;
}

static json_action_result
on_array_start(void *state)
{
	JsonReader *reader = state;
	int			line,
				column;

	current_position(reader->lex, &line, &column);
	builder_open(&reader->builder, SV_SEQUENCE, line, column);
	JSON_ACTION_DONE;
}

static json_action_result
on_container_end(void *state)
{
	JsonReader *reader = state;

	builder_close(&reader->builder);
	JSON_ACTION_DONE;
}

static json_action_result
on_field_start(void *state, char *fname, bool isnull)
{
	JsonReader *reader = state;

	/* the lexer already stands on the value; that is where errors point */
	current_position(reader->lex, &reader->value_line, &reader->value_column);
	builder_key(&reader->builder, fname, reader->value_line, reader->value_column);
	JSON_ACTION_DONE;
}

static json_action_result
on_element_start(void *state, bool isnull)
{
	JsonReader *reader = state;

	current_position(reader->lex, &reader->value_line, &reader->value_column);
	JSON_ACTION_DONE;
}

static json_action_result
on_scalar(void *state, char *token, JsonTokenType tokentype)
{
	JsonReader *reader = state;
	SchemaValue *value;
	char	   *number;

	switch (tokentype)
	{
		case JSON_TOKEN_STRING:
			value = schema_value_new(SV_STRING, reader->value_line, reader->value_column);
			value->str = token;
			break;
		case JSON_TOKEN_NUMBER:
			if (schema_number_text(token, true, &number))
				value = schema_value_new(SV_INT, reader->value_line, reader->value_column);
			else
			{
				/* jsonapi accepts only numbers that read as YAML floats too */
				value = schema_value_new(SV_FLOAT, reader->value_line, reader->value_column);
				if (!schema_number_text(token, false, &number))
					number = token;
			}
			value->str = number;
			break;
		case JSON_TOKEN_TRUE:
		case JSON_TOKEN_FALSE:
			value = schema_value_new(SV_BOOL, reader->value_line, reader->value_column);
			value->str = tokentype == JSON_TOKEN_TRUE ? "true" : "false";
			break;
		default:
			value = schema_value_new(SV_NULL, reader->value_line, reader->value_column);
			break;
	}
	builder_value(&reader->builder, value);
	JSON_ACTION_DONE;
}

/*
 * Refuse input nested deeper than SCHEMA_MAX_DEPTH before the recursive
 * parser sees it.  Brackets inside strings do not count.
 */
static SchemaError *
check_nesting(const char *input, int len)
{
	int			depth = 0;
	int			line = 1;
	const char *line_start = input;
	bool		in_string = false;

	for (const char *p = input; p < input + len; p++)
	{
		if (*p == '\n')
		{
			line++;
			line_start = p + 1;
		}
		if (in_string)
		{
			if (*p == '\\' && p + 1 < input + len)
				p++;
			else if (*p == '"')
				in_string = false;
			continue;
		}
		if (*p == '"')
			in_string = true;
		else if (*p == '{' || *p == '[')
		{
			if (++depth > SCHEMA_MAX_DEPTH)
				return schema_syntax_error(line, (int) (p - line_start) + 1,
										   "invalid JSON: nesting is deeper than %d levels",
										   SCHEMA_MAX_DEPTH);
		}
		else if (*p == '}' || *p == ']')
			depth--;
	}
	return NULL;
}

SchemaValue *
schema_read_json(const char *input, int len, int encoding, SchemaError **error)
{
	JsonReader	reader;
	JsonSemAction sem;
	JsonParseErrorType result;

	*error = check_nesting(input, len);
	if (*error)
		return NULL;

	memset(&reader, 0, sizeof(reader));
	builder_init(&reader.builder, "JSON");
	reader.value_line = 1;
	reader.value_column = 1;
	reader.lex = compat_json_lex_context((char *) input, len, encoding);

	memset(&sem, 0, sizeof(sem));
	sem.semstate = &reader;
	sem.object_start = on_object_start;
	sem.object_end = on_container_end;
	sem.array_start = on_array_start;
	sem.array_end = on_container_end;
	sem.object_field_start = on_field_start;
	sem.array_element_start = on_element_start;
	sem.scalar = on_scalar;

	result = pg_parse_json(reader.lex, &sem);
	if (result != JSON_SUCCESS)
	{
		int			line,
					column;

		current_position(reader.lex, &line, &column);
		*error = schema_syntax_error(line, column, "invalid JSON: %s",
									 json_errdetail(result, reader.lex));
		return NULL;
	}
	if (reader.builder.error)
	{
		*error = reader.builder.error;
		return NULL;
	}
	return reader.builder.root;
}

/*
 * Definitions are UTF-8 text, as YAML and JSON are, whatever the
 * database's encoding (in a SQL_ASCII database nothing else checks it).
 * Find the first byte that does not start a valid UTF-8 character and say
 * where it is, in lines and characters; NULL when all is valid.
 */
static SchemaError *
check_utf8(const char *input, int len)
{
	int			line = 1;
	int			column = 1;

	for (int i = 0; i < len;)
	{
		const unsigned char *c = (const unsigned char *) input + i;
		int			n = pg_utf_mblen(c);

		if (n > len - i || !pg_utf8_islegal(c, n))
			return schema_syntax_error(line, column,
									   "the definition is not valid UTF-8: byte 0x%02x at offset %d",
									   *c, i);
		if (*c == '\n')
		{
			line++;
			column = 1;
		}
		else
			column++;
		i += n;
	}
	return NULL;
}

/*
 * Read a definition in either format: input whose first significant
 * character is '{' or '[' is JSON, anything else YAML.
 */
SchemaValue *
schema_read(const char *input, int len, int encoding, SchemaError **error)
{
	const char *p = input;

	if (len > SCHEMA_MAX_INPUT)
	{
		*error = schema_error("", "Split the index or remove unused parts.",
							  "the definition is %d bytes long, more than the %d allowed",
							  len, SCHEMA_MAX_INPUT);
		return NULL;
	}
	if (memchr(input, '\0', len) != NULL)
	{
		*error = schema_error("", NULL, "the definition contains a zero byte");
		return NULL;
	}
	if ((*error = check_utf8(input, len)) != NULL)
		return NULL;
	while (p < input + len && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	if (p == input + len)
	{
		*error = schema_error("", "Pass the index schema as YAML or JSON text.",
							  "the definition is empty");
		return NULL;
	}
	if (*p == '{' || *p == '[')
		return schema_read_json(input, len, encoding, error);
	return schema_read_yaml(input, len, error);
}

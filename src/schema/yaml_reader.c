/*-------------------------------------------------------------------------
 *
 * yaml_reader.c
 *	  Reads a YAML definition into a SchemaValue tree with libyaml's event
 *	  parser.
 *
 * Plain scalars are resolved with the YAML 1.2 core schema, as serde_yaml
 * (and therefore the Rust flusso) does: only true/false are booleans, so
 * `yes`, `no` and `on` stay strings.  Quoted scalars and `!!str` are always
 * strings.  Aliases are supported; they share the anchored subtree and count
 * against the value budget in full, so an alias bomb is refused rather than
 * expanded.  Only one document is allowed.
 *
 * libyaml allocates with malloc; everything it hands out is released before
 * this file returns, and nothing here raises an error.
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

#include <yaml.h>

#include "schema/builder.h"

#define YAML_STR_TAG	"tag:yaml.org,2002:str"

typedef struct YamlAnchor
{
	char	   *name;
	SchemaValue *value;
} YamlAnchor;

typedef struct YamlReader
{
	TreeBuilder builder;
	YamlAnchor *anchors;
	int			nanchors;
	int			anchors_size;
	int			documents;
} YamlReader;

static bool
is_one_of(const char *s, const char *const *choices)
{
	for (; *choices; choices++)
	{
		if (strcmp(s, *choices) == 0)
			return true;
	}
	return false;
}

/* Give a plain scalar its YAML 1.2 core schema type. */
static SchemaValue *
resolve_plain(const char *text, int line, int column)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
	static const char *const trues[] = {"true", "True", "TRUE", NULL};
	static const char *const falses[] = {"false", "False", "FALSE", NULL};
	SchemaValue *value;
	char	   *number;

	if (is_one_of(text, nulls))
		return schema_value_new(SV_NULL, line, column);
	if (is_one_of(text, trues) || is_one_of(text, falses))
	{
		value = schema_value_new(SV_BOOL, line, column);
		value->str = pstrdup(is_one_of(text, trues) ? "true" : "false");
		return value;
	}
	if (schema_number_text(text, true, &number))
	{
		value = schema_value_new(SV_INT, line, column);
		value->str = number;
		return value;
	}
	if (schema_number_text(text, false, &number))
	{
		value = schema_value_new(SV_FLOAT, line, column);
		value->str = number;
		return value;
	}
	value = schema_value_new(SV_STRING, line, column);
	value->str = pstrdup(text);
	return value;
}

static void
remember_anchor(YamlReader *reader, const yaml_char_t *anchor, SchemaValue *value)
{
	if (anchor == NULL)
		return;
	if (reader->nanchors == reader->anchors_size)
	{
		reader->anchors_size = reader->anchors_size ? reader->anchors_size * 2 : 8;
		reader->anchors = reader->anchors
			? repalloc(reader->anchors, sizeof(YamlAnchor) * reader->anchors_size)
			: palloc(sizeof(YamlAnchor) * reader->anchors_size);
	}
	reader->anchors[reader->nanchors].name = pstrdup((const char *) anchor);
	reader->anchors[reader->nanchors].value = value;
	reader->nanchors++;
}

/* The most recent definition of an anchor wins, as YAML says. */
static SchemaValue *
find_anchor(YamlReader *reader, const yaml_char_t *anchor)
{
	for (int i = reader->nanchors - 1; i >= 0; i--)
	{
		if (strcmp(reader->anchors[i].name, (const char *) anchor) == 0)
			return reader->anchors[i].value;
	}
	return NULL;
}

/* A scalar or an alias: either a mapping key or a value. */
static bool
add_scalar(YamlReader *reader, SchemaValue *value, int line, int column)
{
	TreeBuilder *builder = &reader->builder;

	if (!builder_expects_key(builder))
		return builder_value(builder, value);

	if (value->kind == SV_SEQUENCE || value->kind == SV_MAPPING)
	{
		builder->error = schema_syntax_error(line, column,
											 "invalid YAML: mapping keys must be scalars");
		return false;
	}
	return builder_key(builder, value->kind == SV_NULL ? "null" : value->str,
					   line, column);
}

static bool
handle_event(YamlReader *reader, yaml_event_t *event)
{
	TreeBuilder *builder = &reader->builder;
	int			line = (int) event->start_mark.line + 1;
	int			column = (int) event->start_mark.column + 1;

	switch (event->type)
	{
		case YAML_DOCUMENT_START_EVENT:
			if (++reader->documents > 1)
			{
				builder->error = schema_syntax_error(line, column,
													 "invalid YAML: a definition is a single YAML document");
				return false;
			}
			return true;

		case YAML_SCALAR_EVENT:
			{
				const char *text = (const char *) event->data.scalar.value;
				const char *tag = (const char *) event->data.scalar.tag;
				SchemaValue *value;

				if (event->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
					(tag == NULL || strcmp(tag, YAML_STR_TAG) != 0))
					value = resolve_plain(text, line, column);
				else
				{
					value = schema_value_new(SV_STRING, line, column);
					value->str = pstrdup(text);
				}
				remember_anchor(reader, event->data.scalar.anchor, value);
				return add_scalar(reader, value, line, column);
			}

		case YAML_ALIAS_EVENT:
			{
				SchemaValue *target = find_anchor(reader, event->data.alias.anchor);

				if (target == NULL)
				{
					builder->error = schema_syntax_error(line, column,
														 "invalid YAML: unknown alias \"%s\"",
														 (const char *) event->data.alias.anchor);
					return false;
				}
				for (int i = 0; i < builder->depth; i++)
				{
					if (builder->frames[i].node == target)
					{
						builder->error = schema_syntax_error(line, column,
															 "invalid YAML: alias \"%s\" refers to a value that contains it",
															 (const char *) event->data.alias.anchor);
						return false;
					}
				}
				return add_scalar(reader, target, line, column);
			}

		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (builder_expects_key(builder))
			{
				builder->error = schema_syntax_error(line, column,
													 "invalid YAML: mapping keys must be scalars");
				return false;
			}
			if (!builder_open(builder,
							  event->type == YAML_MAPPING_START_EVENT ? SV_MAPPING : SV_SEQUENCE,
							  line, column))
				return false;
			remember_anchor(reader,
							event->type == YAML_MAPPING_START_EVENT
							? event->data.mapping_start.anchor
							: event->data.sequence_start.anchor,
							builder->frames[builder->depth - 1].node);
			return true;

		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			return builder_close(builder);

		default:
			return true;
	}
}

SchemaValue *
schema_read_yaml(const char *input, int len, SchemaError **error)
{
	YamlReader	reader;
	yaml_parser_t parser;
	bool		done = false;

	memset(&reader, 0, sizeof(reader));
	builder_init(&reader.builder, "YAML");
	*error = NULL;

	if (!yaml_parser_initialize(&parser))
	{
		*error = schema_error("", NULL, "could not initialize the YAML parser");
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *) input, len);
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);

	while (!done)
	{
		yaml_event_t event;
		bool		ok;

		if (!yaml_parser_parse(&parser, &event))
		{
			const char *problem = parser.problem ? parser.problem : "malformed input";

			if (parser.context)
				*error = schema_syntax_error((int) parser.problem_mark.line + 1,
											 (int) parser.problem_mark.column + 1,
											 "invalid YAML: %s (%s)", problem, parser.context);
			else
				*error = schema_syntax_error((int) parser.problem_mark.line + 1,
											 (int) parser.problem_mark.column + 1,
											 "invalid YAML: %s", problem);
			break;
		}
		ok = handle_event(&reader, &event);
		done = (event.type == YAML_STREAM_END_EVENT);
		yaml_event_delete(&event);
		if (!ok)
		{
			*error = reader.builder.error;
			break;
		}
	}
	yaml_parser_delete(&parser);

	if (*error)
		return NULL;
	if (reader.builder.root == NULL)
	{
		*error = schema_error("", "Pass the index schema as YAML or JSON text.",
							  "the definition is empty");
		return NULL;
	}
	return reader.builder.root;
}

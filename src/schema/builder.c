/*-------------------------------------------------------------------------
 *
 * builder.c
 *	  Tree assembly shared by the YAML and JSON readers.
 *
 * A reader reports keys, scalars and the opening and closing of containers;
 * the builder links them into a SchemaValue tree and records the first
 * problem it meets (a key given twice, nesting too deep, a definition that
 * expands past the value budget).  After an error every call is a no-op that
 * returns false, so a reader can simply stop at the first false.
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

#include "schema/builder.h"

void
builder_init(TreeBuilder *builder, const char *format)
{
	memset(builder, 0, sizeof(TreeBuilder));
	builder->format = format;
}

/* Is the next scalar a mapping key rather than a value? */
bool
builder_expects_key(const TreeBuilder *builder)
{
	const BuilderFrame *top;

	if (builder->depth == 0)
		return false;
	top = &builder->frames[builder->depth - 1];
	return top->node->kind == SV_MAPPING && top->pending_key == NULL;
}

bool
builder_key(TreeBuilder *builder, const char *key, int line, int column)
{
	BuilderFrame *top;

	if (builder->error)
		return false;
	Assert(builder_expects_key(builder));
	top = &builder->frames[builder->depth - 1];

	if (schema_value_get(top->node, key) != NULL)
	{
		builder->error = schema_syntax_error(line, column,
											 "invalid %s: duplicate key \"%s\"",
											 builder->format, key);
		return false;
	}
	top->pending_key = pstrdup(key);
	return true;
}

/* Link a finished value into the open container, or make it the root. */
static bool
attach(TreeBuilder *builder, SchemaValue *value, char *key)
{
	builder->total += value->weight;
	if (builder->total > SCHEMA_MAX_VALUES)
	{
		builder->error = schema_syntax_error(value->line, value->column,
											 "invalid %s: the definition expands to more than %d values",
											 builder->format, SCHEMA_MAX_VALUES);
		return false;
	}

	if (builder->depth == 0)
	{
		builder->root = value;
		return true;
	}
	schema_value_append(builder->frames[builder->depth - 1].node, key, value);
	return true;
}

/* Take the key a new value goes under, clearing it from the open mapping. */
static char *
take_key(TreeBuilder *builder)
{
	BuilderFrame *top;
	char	   *key;

	if (builder->depth == 0)
		return NULL;
	top = &builder->frames[builder->depth - 1];
	key = top->pending_key;
	top->pending_key = NULL;
	return key;
}

bool
builder_value(TreeBuilder *builder, SchemaValue *value)
{
	if (builder->error)
		return false;
	return attach(builder, value, take_key(builder));
}

bool
builder_open(TreeBuilder *builder, SchemaValueKind kind, int line, int column)
{
	BuilderFrame *frame;

	if (builder->error)
		return false;
	if (builder->depth >= SCHEMA_MAX_DEPTH)
	{
		builder->error = schema_syntax_error(line, column,
											 "invalid %s: nesting is deeper than %d levels",
											 builder->format, SCHEMA_MAX_DEPTH);
		return false;
	}
	frame = &builder->frames[builder->depth];
	frame->key = take_key(builder);
	frame->pending_key = NULL;
	frame->node = schema_value_new(kind, line, column);
	builder->depth++;
	return true;
}

/*
 * Close the innermost container and link it into its parent.  Linking happens
 * here rather than at open so that the parent counts the child's full weight.
 */
bool
builder_close(TreeBuilder *builder)
{
	BuilderFrame *frame;

	if (builder->error)
		return false;
	Assert(builder->depth > 0);
	builder->depth--;
	frame = &builder->frames[builder->depth];
	/* the container itself was counted by nothing yet; its items were */
	builder->total -= frame->node->weight - 1;
	return attach(builder, frame->node, frame->key);
}

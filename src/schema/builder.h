/*-------------------------------------------------------------------------
 *
 * builder.h
 *	  Assembles a SchemaValue tree from the event streams of the YAML and
 *	  JSON readers, enforcing what both formats share: a depth limit, a
 *	  value budget and keys that appear once per mapping.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SCHEMA_BUILDER_H
#define FLUSSO_SCHEMA_BUILDER_H

#include "schema/value.h"

typedef struct BuilderFrame
{
	SchemaValue *node;			/* the open mapping or sequence */
	char	   *key;			/* key under which node goes into its parent */
	char	   *pending_key;	/* mappings: key read, value not yet */
} BuilderFrame;

typedef struct TreeBuilder
{
	const char *format;			/* "YAML" or "JSON", for messages */
	BuilderFrame frames[SCHEMA_MAX_DEPTH + 1];
	int			depth;			/* open containers */
	SchemaValue *root;
	int64		total;			/* values added so far, aliases in full */
	SchemaError *error;			/* first error, after which all is ignored */
} TreeBuilder;

extern void builder_init(TreeBuilder *builder, const char *format);
extern bool builder_expects_key(const TreeBuilder *builder);
extern bool builder_key(TreeBuilder *builder, const char *key, int line, int column);
extern bool builder_value(TreeBuilder *builder, SchemaValue *value);
extern bool builder_open(TreeBuilder *builder, SchemaValueKind kind, int line, int column);
extern bool builder_close(TreeBuilder *builder);

#endif							/* FLUSSO_SCHEMA_BUILDER_H */

/*-------------------------------------------------------------------------
 *
 * value.h
 *	  The document tree that the YAML and JSON readers produce and that the
 *	  schema model, the canonical form and the mapping are written from.
 *
 * A SchemaValue is a plain tree of scalars, sequences and mappings, each
 * remembering where it started in the input so that errors can point at it.
 * It is deliberately dumb: no meaning is attached here.
 *
 * This header and everything under src/schema/ compiles both in the backend
 * and in frontend programs (the fuzz harness), so it may only use palloc,
 * StringInfo and other src/common facilities.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SCHEMA_VALUE_H
#define FLUSSO_SCHEMA_VALUE_H

#include "lib/stringinfo.h"

/* deepest nesting of mappings and sequences a definition may have */
#define SCHEMA_MAX_DEPTH		64

/* largest definition accepted, in bytes */
#define SCHEMA_MAX_INPUT		(1024 * 1024)

/* most values a definition may expand to (YAML aliases count in full) */
#define SCHEMA_MAX_VALUES		100000

typedef enum SchemaValueKind
{
	SV_NULL,
	SV_BOOL,
	SV_INT,
	SV_FLOAT,
	SV_STRING,
	SV_SEQUENCE,
	SV_MAPPING
} SchemaValueKind;

typedef struct SchemaValue
{
	SchemaValueKind kind;
	int			line;			/* 1-based position of the value's start */
	int			column;

	/*
	 * Scalars: the text of the value.  Strings hold their content, booleans
	 * "true" or "false", numbers a JSON number in canonical spelling (see
	 * schema_number_text).
	 */
	char	   *str;

	/* Sequences and mappings: the items, and for mappings their keys. */
	int			nitems;
	int			capacity;
	char	  **keys;
	struct SchemaValue **items;

	/* values this subtree expands to, itself included (alias budget) */
	int			weight;
} SchemaValue;

/*
 * An error found while reading or interpreting a definition.  The core never
 * raises errors itself; it returns one of these and the SQL layer (or the fuzz
 * harness) decides what to do with it.
 */
typedef struct SchemaError
{
	bool		syntax;			/* the input is not well-formed YAML/JSON */
	char	   *path;			/* where, e.g. "fields[4] (has_many reviews)" */
	char	   *message;		/* what is wrong */
	char	   *hint;			/* what to do about it, or NULL */
} SchemaError;

extern SchemaValue *schema_value_new(SchemaValueKind kind, int line, int column);
extern SchemaValue *schema_value_string(const char *str);
extern void schema_value_append(SchemaValue *container, const char *key,
								SchemaValue *item);
extern SchemaValue *schema_value_get(const SchemaValue *mapping, const char *key);
extern void schema_value_set(SchemaValue *mapping, const char *key,
							 SchemaValue *item);
extern SchemaValue *schema_value_mapping(void);
extern void schema_put_string(SchemaValue *mapping, const char *key, const char *str);
extern void schema_put_bool(SchemaValue *mapping, const char *key, bool b);
extern void schema_put_int(SchemaValue *mapping, const char *key, int i);
extern SchemaValue *schema_string_list(char **items, int nitems);
extern const char *schema_value_kind_name(SchemaValueKind kind);

extern void schema_value_to_json(StringInfo buf, const SchemaValue *value,
								 bool sort_keys);
extern void schema_json_string(StringInfo buf, const char *str);
extern bool schema_number_text(const char *literal, bool integer_only,
							   char **normalized);

extern char *schema_vformat(const char *fmt, va_list args) pg_attribute_printf(1, 0);
extern SchemaError *schema_error(const char *path, const char *hint,
								 const char *fmt,...) pg_attribute_printf(3, 4);
extern SchemaError *schema_syntax_error(int line, int column, const char *fmt,...) pg_attribute_printf(3, 4);

/* readers: each returns a tree, or NULL with *error set */
extern SchemaValue *schema_read_yaml(const char *input, int len,
									 SchemaError **error);
extern SchemaValue *schema_read_json(const char *input, int len, int encoding,
									 SchemaError **error);
extern SchemaValue *schema_read(const char *input, int len, int encoding,
								SchemaError **error);

#endif							/* FLUSSO_SCHEMA_VALUE_H */

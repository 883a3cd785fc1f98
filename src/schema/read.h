/*-------------------------------------------------------------------------
 *
 * read.h
 *	  Typed access to a SchemaValue mapping, with errors that name the path
 *	  of the offending key in the user's words.  Used by model.c and
 *	  fields.c to interpret a definition.
 *
 * Every function takes the ReadContext and does nothing once an error has
 * been recorded there, so callers check cx->error after a group of reads
 * instead of after each one.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SCHEMA_READ_H
#define FLUSSO_SCHEMA_READ_H

#include "schema/names.h"

typedef struct ReadContext
{
	SchemaError *error;			/* the first error; reading stops there */
	const char *namespace;		/* the top-level schema, default for joins */
} ReadContext;

extern char *path_key(const char *path, const char *key);
extern char *path_item(const char *path, int index);

extern bool read_mapping(ReadContext *cx, const SchemaValue *value, const char *path);
extern bool read_list(ReadContext *cx, const SchemaValue *value, const char *path);
extern void read_check_keys(ReadContext *cx, const SchemaValue *mapping,
							const char *path, const char *const *allowed);
extern const SchemaValue *read_required(ReadContext *cx, const SchemaValue *mapping,
										const char *path, const char *key,
										const char *hint);
extern char *read_string(ReadContext *cx, const SchemaValue *mapping,
						 const char *path, const char *key, bool required);
extern char *read_identifier(ReadContext *cx, const SchemaValue *mapping,
							 const char *path, const char *key, bool required);
extern char *read_identifier_value(ReadContext *cx, const SchemaValue *value,
								   const char *path);
extern char *read_field_name(ReadContext *cx, const SchemaValue *value,
							 const char *path);
extern bool read_bool(ReadContext *cx, const SchemaValue *mapping,
					  const char *path, const char *key, bool *result);
extern bool read_int(ReadContext *cx, const SchemaValue *mapping,
					 const char *path, const char *key, int *result);
extern bool read_scalar_type(ReadContext *cx, const SchemaValue *mapping,
							 const char *path, const char *key, ScalarType *type);
extern char *read_scalar_text(ReadContext *cx, const SchemaValue *value,
							  const char *path);
extern void wrong_kind(ReadContext *cx, const SchemaValue *value, const char *path,
					   const char *expected);

/* model.c, used by fields.c */
extern SchemaFilterList read_filters(ReadContext *cx, const SchemaValue *mapping,
									 const char *path, const char *key);
extern ColumnList read_column_list(ReadContext *cx, const SchemaValue *mapping,
								   const char *path, const char *key, bool required);
extern SchemaThrough *read_through(ReadContext *cx, const SchemaValue *mapping,
								   const char *path);

/* relations.c */
extern void read_join(ReadContext *cx, const SchemaValue *value, SchemaField *field,
					  const char *path);
extern void read_aggregate(ReadContext *cx, const SchemaValue *value, SchemaField *field,
						   const char *path);

/* fields.c */
extern const char *const join_key_hints[];
extern void read_column(ReadContext *cx, const SchemaValue *value, SchemaField *field,
						const char *path);
extern SchemaFieldList read_fields(ReadContext *cx, const SchemaValue *mapping,
								   const char *path, bool required);

#endif							/* FLUSSO_SCHEMA_READ_H */

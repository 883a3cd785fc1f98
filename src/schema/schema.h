/*-------------------------------------------------------------------------
 *
 * schema.h
 *	  The index schema model: what one document of an index looks like, as
 *	  declared by a flusso version-1 schema (YAML or JSON).
 *
 * schema_parse() turns definition text into an IndexSchema or a SchemaError;
 * schema_canonical_json() and schema_mapping_json() write the canonical form
 * (hashed into the index version) and the OpenSearch index body.  Nothing
 * under src/schema/ depends on the rest of flusso or on backend-only code.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SCHEMA_H
#define FLUSSO_SCHEMA_H

#include "schema/value.h"

#define SCHEMA_DEFAULT_NAMESPACE "public"

/* The scalar types of the format: field type keys and aggregate types. */
typedef enum ScalarType
{
	ST_TEXT,
	ST_IDENTIFIER,
	ST_KEYWORD,
	ST_ENUM,
	ST_UUID,
	ST_BOOLEAN,
	ST_SHORT,
	ST_INTEGER,
	ST_LONG,
	ST_FLOAT,
	ST_DOUBLE,
	ST_DECIMAL,
	ST_DATE,
	ST_TIMESTAMP,
	ST_BINARY,
	ST_JSON
} ScalarType;

typedef enum FieldKind
{
	FIELD_SCALAR,				/* one of ScalarType, from a column */
	FIELD_CUSTOM,				/* explicit Postgres types / OpenSearch type */
	FIELD_GEO,					/* geo_point from lat+lon or one column */
	FIELD_OBJECT,				/* sub-object from the same row */
	FIELD_MAP,					/* json column with dynamic keys */
	FIELD_JOIN,					/* a related table folded in */
	FIELD_AGGREGATE,			/* a related table rolled up */
	FIELD_CONSTANT				/* a fixed value */
} FieldKind;

typedef enum JoinKind
{
	JOIN_BELONGS_TO,
	JOIN_HAS_ONE,
	JOIN_HAS_MANY,
	JOIN_MANY_TO_MANY
} JoinKind;

typedef enum AggregateKind
{
	AGG_COUNT,
	AGG_SUM,
	AGG_AVG,
	AGG_MIN,
	AGG_MAX,
	AGG_IDS
} AggregateKind;

typedef enum FilterOp
{
	FILTER_RAW,
	FILTER_IS_NULL,
	FILTER_IS_NOT_NULL,
	FILTER_EQ,
	FILTER_NEQ,
	FILTER_LT,
	FILTER_LTE,
	FILTER_GT,
	FILTER_GTE,
	FILTER_LIKE,
	FILTER_ILIKE,
	FILTER_IN,
	FILTER_NOT_IN,
	FILTER_BETWEEN
} FilterOp;

typedef enum Transform
{
	TRANSFORM_LOWERCASE,
	TRANSFORM_TRIM
} Transform;

typedef struct SchemaFilter
{
	FilterOp	op;
	char	   *raw;			/* FILTER_RAW: SQL text as written */
	char	   *column;			/* every other op */
	int			nvalues;		/* 1 for scalar ops, 2 for between, n for in */
	char	  **values;			/* as text; cast to the column type later */
} SchemaFilter;

typedef struct SchemaFilterList
{
	int			nfilters;
	SchemaFilter *filters;
} SchemaFilterList;

typedef struct SchemaThrough
{
	char	   *table;
	char	   *left_key;		/* junction column pointing at the parent */
	char	   *right_key;		/* junction column pointing at the related row */
} SchemaThrough;

typedef struct SchemaOrderBy
{
	char	   *column;
	bool		descending;
} SchemaOrderBy;

/* A list of column names, e.g. a (possibly composite) primary key. */
typedef struct ColumnList
{
	int			ncolumns;
	char	  **columns;
} ColumnList;

typedef struct SchemaField SchemaField;

typedef struct SchemaFieldList
{
	int			nfields;
	SchemaField **fields;
} SchemaFieldList;

struct SchemaField
{
	FieldKind	kind;
	char	   *name;			/* the document key */
	char	   *path;			/* where it was declared, for messages */
	SchemaValue *options;		/* extra mapping properties, or NULL */

	/* FIELD_SCALAR, FIELD_CUSTOM, FIELD_GEO (one-column form), FIELD_MAP */
	ScalarType	type;			/* FIELD_SCALAR; FIELD_MAP: the values' type */
	char	   *column;
	bool		required;
	int			ntransforms;
	Transform  *transforms;
	SchemaValue *default_value; /* a scalar, or NULL */
	int			nvariants;		/* ST_ENUM: rank order, may be empty */
	char	  **variants;
	int			ncustom_types;	/* FIELD_CUSTOM */
	char	  **custom_types;
	char	   *custom_opensearch;

	/* FIELD_GEO, two-column form */
	char	   *lat;
	char	   *lon;

	/* FIELD_OBJECT, FIELD_JOIN */
	SchemaFieldList children;

	/* FIELD_JOIN and FIELD_AGGREGATE: the related table */
	JoinKind	join;
	AggregateKind aggregate;
	char	   *namespace;		/* schema of table (and of through.table) */
	char	   *table;
	ColumnList	primary_key;	/* FIELD_JOIN */
	char	   *foreign_key;	/* has_one, has_many, aggregates */
	SchemaThrough *through;		/* many_to_many, aggregates */
	SchemaFilterList filters;
	int			norder_by;
	SchemaOrderBy *order_by;
	int			limit;			/* has_many, many_to_many; 0 = none */
	bool		required_set;	/* to-one joins: was required given */
	ScalarType	value_type;		/* sum, min, max */
	ScalarType	element_type;	/* ids */

	/* FIELD_CONSTANT */
	SchemaValue *value;
};

typedef struct SoftDelete
{
	char	   *column;			/* exactly one of column and field */
	char	   *field;
	SchemaFilterList when;
} SoftDelete;

typedef struct IndexSchema
{
	int			version;
	char	   *namespace;
	char	   *table;
	ColumnList	primary_key;	/* may be empty */
	SoftDelete *soft_delete;
	SchemaFilterList filters;
	SchemaFieldList fields;
} IndexSchema;

extern IndexSchema *schema_parse(const char *input, int len, int encoding,
								 SchemaError **error);
extern IndexSchema *schema_from_value(const SchemaValue *root, SchemaError **error);
extern char *schema_canonical_json(const IndexSchema *schema);
extern char *schema_mapping_json(const IndexSchema *schema);
extern char *schema_analysis_json(const IndexSchema *schema);
extern bool schema_adds_fields_only(const IndexSchema *before, const IndexSchema *after);

extern const char *schema_type_name(ScalarType type);
extern bool schema_type_from_name(const char *name, ScalarType *type);
extern const char *schema_join_name(JoinKind kind);
extern const char *schema_aggregate_name(AggregateKind kind);
extern const char *schema_filter_op_name(FilterOp op);
extern bool schema_join_is_to_many(JoinKind kind);
extern bool schema_valid_identifier(const char *name);

#endif							/* FLUSSO_SCHEMA_H */

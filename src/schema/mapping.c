/*-------------------------------------------------------------------------
 *
 * mapping.c
 *	  Derives the OpenSearch index body (settings.analysis and a strict
 *	  mapping) from an IndexSchema alone, without a database.
 *
 * The shape follows flusso's OpenSearch sink so that an index moved from
 * the Rust daemon keeps its mapping: `flusso_text` and `flusso_code`
 * analyzers, a lowercase normalizer, `keyword` / `keyword_lowercase` / `text`
 * subfields on string leaves, a rank normalizer behind the `.sort` subfield
 * of an enum with declared variants, and each field's `options` laid over
 * the derived property last (key by key, so an option replaces the derived
 * value of the same key).  One deliberate difference: a `json` field maps to
 * an object with `dynamic: true`, since under the root's `dynamic: strict`
 * any key inside it would otherwise be rejected.
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

#include "schema/schema.h"

#define KEYWORD_IGNORE_ABOVE 256
#define ENUM_SORT_PREFIX "flusso_enumsort__"

typedef struct MappingContext
{
	SchemaValue *char_filters;	/* enum rank char filters, by name */
	SchemaValue *normalizers;
} MappingContext;

static SchemaValue *properties_value(MappingContext *cx, const SchemaFieldList *fields,
									 const char *prefix);

/* The OpenSearch type of a scalar type. */
static const char *
opensearch_type(ScalarType type)
{
	switch (type)
	{
		case ST_TEXT:
		case ST_IDENTIFIER:
			return "text";
		case ST_KEYWORD:
		case ST_ENUM:
		case ST_UUID:
			return "keyword";
		case ST_BOOLEAN:
			return "boolean";
		case ST_SHORT:
			return "short";
		case ST_INTEGER:
			return "integer";
		case ST_LONG:
			return "long";
		case ST_FLOAT:
			return "float";
		case ST_DOUBLE:
		case ST_DECIMAL:
			return "double";
		case ST_DATE:
		case ST_TIMESTAMP:
			return "date";
		case ST_BINARY:
			return "binary";
		case ST_JSON:
			return "object";
	}
	return "keyword";
}

/* What a constant's JSON value maps to. */
static const char *
constant_type(const SchemaValue *value)
{
	switch (value->kind)
	{
		case SV_BOOL:
			return "boolean";
		case SV_INT:
			return "long";
		case SV_FLOAT:
			return "double";
		case SV_SEQUENCE:
			return value->nitems > 0 ? constant_type(value->items[0]) : "keyword";
		case SV_MAPPING:
			return "object";
		default:
			return "keyword";
	}
}

static SchemaValue *
keyword_lowercase(void)
{
	SchemaValue *sub = schema_value_mapping();

	schema_put_string(sub, "type", "keyword");
	schema_put_string(sub, "normalizer", "flusso_lowercase");
	schema_put_int(sub, "ignore_above", KEYWORD_IGNORE_ABOVE);
	return sub;
}

/* flusso's default analyzer and subfields for text and keyword leaves */
static void
add_string_defaults(SchemaValue *prop, const char *type)
{
	SchemaValue *fields = schema_value_mapping();
	SchemaValue *sub = schema_value_mapping();

	if (strcmp(type, "text") == 0)
	{
		schema_put_string(prop, "analyzer", "flusso_text");
		schema_put_string(sub, "type", "keyword");
		schema_put_int(sub, "ignore_above", KEYWORD_IGNORE_ABOVE);
		schema_value_set(fields, "keyword", sub);
	}
	else
	{
		schema_put_string(sub, "type", "text");
		schema_put_string(sub, "analyzer", "flusso_code");
		schema_value_set(fields, "text", sub);
	}
	schema_value_set(fields, "keyword_lowercase", keyword_lowercase());
	schema_value_set(prop, "fields", fields);
}

/*
 * An enum with declared variants sorts by rank: a mapping char filter turns
 * each variant into its zero-padded rank, and a `.sort` keyword subfield is
 * normalized through it.  Values outside the list pass through unchanged and
 * sort after the ranked ones.
 */
static void
add_enum_sort(MappingContext *cx, SchemaValue *prop, const SchemaField *field,
			  const char *path)
{
	char	   *name = psprintf("%s%s", ENUM_SORT_PREFIX, path);
	SchemaValue *rules = schema_value_new(SV_SEQUENCE, 0, 0);
	SchemaValue *char_filter = schema_value_mapping();
	SchemaValue *normalizer = schema_value_mapping();
	SchemaValue *char_filters = schema_value_new(SV_SEQUENCE, 0, 0);
	SchemaValue *sort = schema_value_mapping();
	SchemaValue *fields = schema_value_get(prop, "fields");
	int			width = snprintf(NULL, 0, "%d", field->nvariants - 1);

	for (char *p = name + strlen(ENUM_SORT_PREFIX); *p; p++)
	{
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			*p = '_';
	}
	for (int i = 0; i < field->nvariants; i++)
		schema_value_append(rules, NULL,
							schema_value_string(psprintf("%s => %0*d", field->variants[i], width, i)));
	schema_put_string(char_filter, "type", "mapping");
	schema_value_set(char_filter, "mappings", rules);
	schema_value_set(cx->char_filters, name, char_filter);

	schema_put_string(normalizer, "type", "custom");
	schema_value_append(char_filters, NULL, schema_value_string(name));
	schema_value_set(normalizer, "char_filter", char_filters);
	schema_value_set(normalizer, "filter", schema_value_new(SV_SEQUENCE, 0, 0));
	schema_value_set(cx->normalizers, name, normalizer);

	schema_put_string(sort, "type", "keyword");
	schema_put_string(sort, "normalizer", name);
	schema_put_int(sort, "ignore_above", KEYWORD_IGNORE_ABOVE);
	if (fields == NULL)
	{
		fields = schema_value_mapping();
		schema_value_set(prop, "fields", fields);
	}
	schema_value_set(fields, "sort", sort);
}

/* The OpenSearch type a field maps to. */
static const char *
field_type(const SchemaField *field)
{
	switch (field->kind)
	{
		case FIELD_SCALAR:
			return opensearch_type(field->type);
		case FIELD_CUSTOM:
			return field->custom_opensearch;
		case FIELD_GEO:
			return "geo_point";
		case FIELD_MAP:
		case FIELD_OBJECT:
			return "object";
		case FIELD_JOIN:
			return schema_join_is_to_many(field->join) ? "nested" : "object";
		case FIELD_AGGREGATE:
			switch (field->aggregate)
			{
				case AGG_COUNT:
					return "long";
				case AGG_AVG:
					return "double";
				case AGG_IDS:
					return opensearch_type(field->element_type);
				default:
					return opensearch_type(field->value_type);
			}
		case FIELD_CONSTANT:
			return constant_type(field->value);
	}
	return "keyword";
}

static SchemaValue *
property_value(MappingContext *cx, const SchemaField *field, const char *path)
{
	SchemaValue *prop = schema_value_mapping();
	const char *type = field_type(field);
	bool		has_children = field->kind == FIELD_OBJECT || field->kind == FIELD_JOIN;

	schema_put_string(prop, "type", type);
	if (!has_children && (strcmp(type, "text") == 0 || strcmp(type, "keyword") == 0))
		add_string_defaults(prop, type);
	if (field->kind == FIELD_SCALAR && field->type == ST_IDENTIFIER)
		schema_put_string(prop, "analyzer", "flusso_code");
	if (field->kind == FIELD_SCALAR && field->type == ST_ENUM && field->nvariants > 0)
		add_enum_sort(cx, prop, field, path);
	if (field->kind == FIELD_MAP || (field->kind == FIELD_SCALAR && field->type == ST_JSON))
		schema_put_bool(prop, "dynamic", true);

	if (field->options)
	{
		for (int i = 0; i < field->options->nitems; i++)
			schema_value_set(prop, field->options->keys[i], field->options->items[i]);
	}
	if (has_children)
		schema_value_set(prop, "properties",
						 properties_value(cx, &field->children, path));
	return prop;
}

static SchemaValue *
properties_value(MappingContext *cx, const SchemaFieldList *fields, const char *prefix)
{
	SchemaValue *props = schema_value_mapping();

	for (int i = 0; i < fields->nfields; i++)
	{
		const SchemaField *field = fields->fields[i];
		char	   *path = prefix ? psprintf("%s.%s", prefix, field->name) : field->name;

		schema_value_set(props, field->name, property_value(cx, field, path));
	}
	return props;
}

static SchemaValue *
analyzer(const char *tokenizer, const char *const *filters)
{
	SchemaValue *value = schema_value_mapping();
	SchemaValue *list = schema_value_new(SV_SEQUENCE, 0, 0);

	schema_put_string(value, "type", "custom");
	schema_put_string(value, "tokenizer", tokenizer);
	for (; *filters; filters++)
		schema_value_append(list, NULL, schema_value_string(*filters));
	schema_value_set(value, "filter", list);
	return value;
}

static SchemaValue *
analysis_value(MappingContext *cx)
{
	static const char *const code_filters[] = {
		"flusso_word_delimiter", "flatten_graph", "lowercase", "asciifolding", NULL
	};
	static const char *const text_filters[] = {"lowercase", "asciifolding", NULL};
	SchemaValue *analysis = schema_value_mapping();
	SchemaValue *filter = schema_value_mapping();
	SchemaValue *delimiter = schema_value_mapping();
	SchemaValue *analyzers = schema_value_mapping();
	SchemaValue *lowercase = schema_value_mapping();

	schema_put_string(delimiter, "type", "word_delimiter_graph");
	schema_put_bool(delimiter, "catenate_all", true);
	schema_put_bool(delimiter, "preserve_original", true);
	schema_value_set(filter, "flusso_word_delimiter", delimiter);
	schema_value_set(analysis, "filter", filter);
	if (cx->char_filters->nitems > 0)
		schema_value_set(analysis, "char_filter", cx->char_filters);

	schema_value_set(analyzers, "flusso_code", analyzer("whitespace", code_filters));
	schema_value_set(analyzers, "flusso_text", analyzer("standard", text_filters));
	schema_value_set(analysis, "analyzer", analyzers);

	schema_put_string(lowercase, "type", "custom");
	schema_value_set(lowercase, "filter", schema_string_list((char **) text_filters, 2));
	schema_value_set(cx->normalizers, "flusso_lowercase", lowercase);
	schema_value_set(analysis, "normalizer", cx->normalizers);
	return analysis;
}

char *
schema_mapping_json(const IndexSchema *schema)
{
	MappingContext cx;
	SchemaValue *body = schema_value_mapping();
	SchemaValue *settings = schema_value_mapping();
	SchemaValue *mappings = schema_value_mapping();
	StringInfoData buf;

	cx.char_filters = schema_value_mapping();
	cx.normalizers = schema_value_mapping();

	/* properties first: they collect the enum normalizers analysis needs */
	schema_put_string(mappings, "dynamic", "strict");
	schema_value_set(mappings, "properties", properties_value(&cx, &schema->fields, NULL));
	schema_value_set(settings, "analysis", analysis_value(&cx));
	schema_value_set(body, "settings", settings);
	schema_value_set(body, "mappings", mappings);

	initStringInfo(&buf);
	schema_value_to_json(&buf, body, false);
	return buf.data;
}

/*
 * The analysis settings the mapping of schema needs (its normalizers and
 * char filters come with the fields that use them), as JSON: an OpenSearch
 * index cannot take other ones while it is open, so a definition whose
 * analysis differs cannot be served by the same index.
 */
char *
schema_analysis_json(const IndexSchema *schema)
{
	MappingContext cx;
	StringInfoData buf;

	cx.char_filters = schema_value_mapping();
	cx.normalizers = schema_value_mapping();
	(void) properties_value(&cx, &schema->fields, NULL);
	initStringInfo(&buf);
	schema_value_to_json(&buf, analysis_value(&cx), false);
	return buf.data;
}

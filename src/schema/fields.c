/*-------------------------------------------------------------------------
 *
 * fields.c
 *	  Reads the `fields` lists of a definition: the type key of each field,
 *	  the siblings that type allows, and the rules that tie them together
 *	  (a join's key sibling, an aggregate's column and types, geo sources).
 *
 * A field is a mapping with exactly one type key whose value is the document
 * key.  Keys that belong to some other type are reported as "does not apply"
 * with what the field takes instead; keys no type knows are reported as
 * unknown, with a suggestion when they look like a typo.
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

#include "schema/read.h"

#define REQUIRED_HINT \
	"Say whether the value may be null: add required: true or required: false."

/* every sibling key some field type takes */
static const char *const all_siblings[] = {
	"column", "required", "options", "transforms", "default", "variants",
	"postgres", "opensearch", "lat", "lon", "values", "fields", "table",
	"schema", "primary_key", "foreign_key", "through", "filters", "order_by",
	"limit", "value_type", "element_type", "value", NULL
};

static const char *const scalar_keys[] = {
	"column", "required", "options", "transforms", "default", NULL
};
static const char *const enum_keys[] = {
	"column", "required", "options", "transforms", "default", "variants", NULL
};
static const char *const custom_keys[] = {
	"postgres", "opensearch", "column", "required", "options", "default", NULL
};
static const char *const geo_keys[] = {"lat", "lon", "column", "required", "options", NULL};
static const char *const map_keys[] = {"values", "column", "required", "options", NULL};
static const char *const object_keys[] = {"fields", "options", NULL};
static const char *const constant_keys[] = {"value", NULL};

/* indexed by JoinKind */
static const char *const *const join_keys[] = {
	(const char *const[]) {"table", "schema", "primary_key", "column", "required",
	"filters", "fields", "options", NULL},
	(const char *const[]) {"table", "schema", "primary_key", "foreign_key", "required",
	"filters", "order_by", "fields", "options", NULL},
	(const char *const[]) {"table", "schema", "primary_key", "foreign_key",
	"filters", "order_by", "limit", "fields", "options", NULL},
	(const char *const[]) {"table", "schema", "primary_key", "through",
	"filters", "order_by", "limit", "fields", "options", NULL},
};

/* indexed by JoinKind: what names the related row */
const char *const join_key_hints[] = {
	"A belongs_to join takes column: this table's column pointing at the related row (default: the field name).",
	"A has_one join takes foreign_key: the related table's column pointing back at this row.",
	"A has_many join takes foreign_key: the related table's column pointing back at this row.",
	"A many_to_many join takes through: the junction table with its left_key and right_key.",
};

/* indexed by AggregateKind */
static const char *const *const aggregate_keys[] = {
	(const char *const[]) {"table", "schema", "foreign_key", "through", "filters",
	"options", NULL},
	(const char *const[]) {"table", "schema", "column", "value_type", "foreign_key",
	"through", "filters", "options", NULL},
	(const char *const[]) {"table", "schema", "column", "foreign_key", "through",
	"filters", "options", NULL},
	(const char *const[]) {"table", "schema", "column", "value_type", "foreign_key",
	"through", "filters", "options", NULL},
	(const char *const[]) {"table", "schema", "column", "value_type", "foreign_key",
	"through", "filters", "options", NULL},
	(const char *const[]) {"table", "schema", "element_type", "foreign_key", "through",
	"filters", "options", NULL},
};

static const char *const transform_names[] = {"lowercase", "trim", NULL};

static SchemaField *read_field(ReadContext *cx, const SchemaValue *value,
							   const char *path);

/* "a" or "an", for "a keyword field" and "an ids field" */
static const char *
article(const char *word)
{
	return strchr("aeiou", word[0]) ? "an" : "a";
}

static bool
in_list(const char *word, const char *const *list)
{
	for (; *list; list++)
	{
		if (strcmp(word, *list) == 0)
			return true;
	}
	return false;
}

/* Which field kind a type key names; false if it names none. */
static bool
classify_tag(const char *tag, SchemaField *field)
{
	if (schema_type_from_name(tag, &field->type))
		field->kind = FIELD_SCALAR;
	else if (schema_join_from_name(tag, &field->join))
		field->kind = FIELD_JOIN;
	else if (schema_aggregate_from_name(tag, &field->aggregate))
		field->kind = FIELD_AGGREGATE;
	else if (strcmp(tag, "custom") == 0)
		field->kind = FIELD_CUSTOM;
	else if (strcmp(tag, "geo") == 0)
		field->kind = FIELD_GEO;
	else if (strcmp(tag, "object") == 0)
		field->kind = FIELD_OBJECT;
	else if (strcmp(tag, "map") == 0)
		field->kind = FIELD_MAP;
	else if (strcmp(tag, "constant") == 0)
		field->kind = FIELD_CONSTANT;
	else
		return false;
	return true;
}

static const char *const *
allowed_keys(const SchemaField *field)
{
	switch (field->kind)
	{
		case FIELD_SCALAR:
			return field->type == ST_ENUM ? enum_keys : scalar_keys;
		case FIELD_CUSTOM:
			return custom_keys;
		case FIELD_GEO:
			return geo_keys;
		case FIELD_OBJECT:
			return object_keys;
		case FIELD_MAP:
			return map_keys;
		case FIELD_JOIN:
			return join_keys[field->join];
		case FIELD_AGGREGATE:
			return aggregate_keys[field->aggregate];
		case FIELD_CONSTANT:
			return constant_keys;
	}
	return constant_keys;
}

/* Why a key that other field types take is wrong on this one. */
static char *
misplaced_key_hint(const SchemaField *field, const char *tag, const char *key)
{
	if (field->kind == FIELD_JOIN)
	{
		if (strcmp(key, "column") == 0 || strcmp(key, "foreign_key") == 0 ||
			strcmp(key, "through") == 0)
			return pstrdup(join_key_hints[field->join]);
		if (strcmp(key, "limit") == 0 || strcmp(key, "order_by") == 0)
			return pstrdup(field->join == JOIN_BELONGS_TO
						   ? "A belongs_to join reads the one row its column points at."
						   : "A has_one join picks a single row: order_by chooses which.");
		if (strcmp(key, "required") == 0)
			return pstrdup("A to-many join is always a list, never null.");
	}
	if (field->kind == FIELD_AGGREGATE)
	{
		if (strcmp(key, "column") == 0 || strcmp(key, "value_type") == 0)
			return pstrdup(field->aggregate == AGG_IDS
						   ? "An ids aggregate always collects the related table's primary key; give element_type."
						   : field->aggregate == AGG_COUNT
						   ? "A count counts rows and is always a long."
						   : "An avg is always a double; it takes column but no value_type.");
		if (strcmp(key, "element_type") == 0)
			return pstrdup("Only an ids aggregate takes element_type.");
		if (strcmp(key, "required") == 0)
			return pstrdup("Aggregates are never required: count and ids are never null, the others are null when no row matches.");
	}
	return psprintf("Fields of type %s take: %s.", tag,
					schema_join_words(allowed_keys(field)));
}

static void
check_field_keys(ReadContext *cx, const SchemaValue *value, const SchemaField *field,
				 const char *tag, const char *path)
{
	const char *const *allowed = allowed_keys(field);

	for (int i = 0; i < value->nitems && !cx->error; i++)
	{
		const char *key = value->keys[i];
		const char *suggestion;

		if (strcmp(key, tag) == 0 || in_list(key, allowed))
			continue;
		if (in_list(key, all_siblings))
		{
			cx->error = schema_error(path, misplaced_key_hint(field, tag, key),
									 "key \"%s\" does not apply to %s %s field",
									 key, article(tag), tag);
			return;
		}
		suggestion = schema_suggest(key, allowed);
		if (suggestion)
			cx->error = schema_error(path, psprintf("Did you mean \"%s\"?", suggestion),
									 "unknown key \"%s\"", key);
		else
			cx->error = schema_error(path, psprintf("Fields of type %s take: %s.", tag,
													schema_join_words(allowed)),
									 "unknown key \"%s\"", key);
	}
}

/* Find the one type key of a field mapping. */
static const char *
find_type_key(ReadContext *cx, const SchemaValue *value, SchemaField *field,
			  const char *path)
{
	const char *tag = NULL;

	for (int i = 0; i < value->nitems; i++)
	{
		if (!classify_tag(value->keys[i], field))
			continue;
		if (tag)
		{
			cx->error = schema_error(path, "Each field has exactly one type key; split it into two fields.",
									 "the field has two type keys, \"%s\" and \"%s\"",
									 tag, value->keys[i]);
			return NULL;
		}
		tag = value->keys[i];
	}
	if (tag)
	{
		classify_tag(tag, field);
		return tag;
	}

	for (int i = 0; i < value->nitems; i++)
	{
		const char *suggestion;

		if (in_list(value->keys[i], all_siblings))
			continue;
		suggestion = schema_suggest(value->keys[i], field_type_keys);
		cx->error = schema_error(path, suggestion
								 ? psprintf("Did you mean \"%s\"?", suggestion)
								 : psprintf("Field types are: %s.", schema_join_words(field_type_keys)),
								 "unknown field type \"%s\"", value->keys[i]);
		return NULL;
	}
	cx->error = schema_error(path, "Start the field with its type and document key, e.g. keyword: email.",
							 "the field has no type key");
	return NULL;
}

static void
read_options(ReadContext *cx, const SchemaValue *value, SchemaField *field,
			 const char *path)
{
	const SchemaValue *options = schema_value_get(value, "options");

	if (options && read_mapping(cx, options, path_key(path, "options")))
		field->options = (SchemaValue *) options;
}

static void
read_required_flag(ReadContext *cx, const SchemaValue *value, SchemaField *field,
				   const char *path)
{
	if (cx->error)
		return;
	if (!read_bool(cx, value, path, "required", &field->required) && !cx->error)
		cx->error = schema_error(path, REQUIRED_HINT, "missing key \"required\"");
}

/* `column`, defaulting to the document key lower-cased */
void
read_column(ReadContext *cx, const SchemaValue *value, SchemaField *field,
			const char *path)
{
	field->column = read_identifier(cx, value, path, "column", false);
	if (field->column == NULL && !cx->error)
	{
		field->column = pstrdup(field->name);
		for (char *p = field->column; *p; p++)
			*p = (char) pg_ascii_tolower((unsigned char) *p);
	}
}

static void
read_transforms(ReadContext *cx, const SchemaValue *value, SchemaField *field,
				const char *path)
{
	const SchemaValue *list = schema_value_get(value, "transforms");
	char	   *list_path = path_key(path, "transforms");

	if (list == NULL || !read_list(cx, list, list_path))
		return;
	field->transforms = palloc(sizeof(Transform) * Max(list->nitems, 1));
	for (int i = 0; i < list->nitems && !cx->error; i++)
	{
		const SchemaValue *item = list->items[i];
		const char *suggestion;

		if (item->kind != SV_STRING)
		{
			wrong_kind(cx, item, path_item(list_path, i), "a transform name");
			return;
		}
		if (strcmp(item->str, "lowercase") == 0)
			field->transforms[i] = TRANSFORM_LOWERCASE;
		else if (strcmp(item->str, "trim") == 0)
			field->transforms[i] = TRANSFORM_TRIM;
		else
		{
			suggestion = schema_suggest(item->str, transform_names);
			cx->error = schema_error(path_item(list_path, i),
									 suggestion ? psprintf("Did you mean \"%s\"?", suggestion)
									 : pstrdup("Transforms are lowercase and trim."),
									 "unknown transform \"%s\"", item->str);
			return;
		}
		field->ntransforms = i + 1;
	}
}

static void
read_default(ReadContext *cx, const SchemaValue *value, SchemaField *field,
			 const char *path)
{
	const SchemaValue *def = schema_value_get(value, "default");

	if (cx->error || def == NULL || def->kind == SV_NULL)
		return;
	if (def->kind == SV_SEQUENCE || def->kind == SV_MAPPING)
	{
		cx->error = schema_error(path_key(path, "default"), NULL,
								 "a default must be a single value (string, number or boolean), not %s",
								 schema_value_kind_name(def->kind));
		return;
	}
	field->default_value = (SchemaValue *) def;
}

/* A list of strings under key, each checked by the caller. */
static char **
read_string_list(ReadContext *cx, const SchemaValue *value, const char *path,
				 const char *key, int *count)
{
	const SchemaValue *list = schema_value_get(value, key);
	char	   *list_path = path_key(path, key);
	char	  **result;

	*count = 0;
	if (cx->error || list == NULL || !read_list(cx, list, list_path))
		return NULL;
	result = palloc0(sizeof(char *) * Max(list->nitems, 1));
	for (int i = 0; i < list->nitems; i++)
	{
		if (list->items[i]->kind != SV_STRING)
		{
			wrong_kind(cx, list->items[i], path_item(list_path, i), "a string");
			return NULL;
		}
		result[i] = list->items[i]->str;
	}
	*count = list->nitems;
	return result;
}

static void
read_variants(ReadContext *cx, const SchemaValue *value, SchemaField *field,
			  const char *path)
{
	char	   *list_path = path_key(path, "variants");

	field->variants = read_string_list(cx, value, path, "variants", &field->nvariants);
	for (int i = 0; i < field->nvariants && !cx->error; i++)
	{
		const char *variant = field->variants[i];
		const char *p = variant;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0' || strstr(variant, "=>") || strchr(variant, '\n'))
		{
			cx->error = schema_error(path_item(list_path, i),
									 "A variant must not be blank and must not contain \"=>\" or a line break.",
									 "invalid enum variant \"%s\"", variant);
			return;
		}
		for (int j = 0; j < i; j++)
		{
			if (strcmp(variant, field->variants[j]) == 0)
			{
				cx->error = schema_error(path_item(list_path, i), NULL,
										 "enum variant \"%s\" is listed twice", variant);
				return;
			}
		}
	}
}

static void
read_custom(ReadContext *cx, const SchemaValue *value, SchemaField *field,
			const char *path)
{
	if (!read_required(cx, value, path, "postgres",
					   "List the PostgreSQL column types the field accepts, e.g. postgres: [numeric]."))
		return;
	field->custom_types = read_string_list(cx, value, path, "postgres", &field->ncustom_types);
	if (!cx->error && field->ncustom_types == 0)
		cx->error = schema_error(path_key(path, "postgres"), NULL,
								 "list at least one PostgreSQL type");
	field->custom_opensearch = read_string(cx, value, path, "opensearch", true);
	if (!cx->error && field->custom_opensearch[0] == '\0')
		cx->error = schema_error(path_key(path, "opensearch"), NULL,
								 "the OpenSearch type cannot be empty");
}

static void
read_geo(ReadContext *cx, const SchemaValue *value, SchemaField *field,
		 const char *path)
{
	bool		has_lat = schema_value_get(value, "lat") != NULL;
	bool		has_lon = schema_value_get(value, "lon") != NULL;
	bool		has_column = schema_value_get(value, "column") != NULL;

	if ((has_lat || has_lon) && !(has_lat && has_lon && !has_column))
	{
		cx->error = schema_error(path,
								 "Give both lat and lon (two columns), or one column holding {lat, lon}, [lon, lat] or \"lat,lon\".",
								 "a geo field needs both \"lat\" and \"lon\", or a single \"column\"");
		return;
	}
	field->lat = read_identifier(cx, value, path, "lat", false);
	field->lon = read_identifier(cx, value, path, "lon", false);
	if (!has_lat)
		read_column(cx, value, field, path);
}

static void
read_map(ReadContext *cx, const SchemaValue *value, SchemaField *field,
		 const char *path)
{
	if (!read_required(cx, value, path, "values",
					   "Give the type every value shares, e.g. values: text."))
		return;
	if (!read_scalar_type(cx, value, path, "values", &field->type))
		return;
	if (field->type == ST_BOOLEAN || field->type == ST_BINARY || field->type == ST_JSON)
		cx->error = schema_error(path_key(path, "values"),
								 "Use a text, keyword, number or date type.",
								 "a map's values cannot be of type %s",
								 schema_type_name(field->type));
}

static SchemaField *
read_field(ReadContext *cx, const SchemaValue *value, const char *path)
{
	SchemaField *field = palloc0(sizeof(SchemaField));
	const char *tag;

	if (!read_mapping(cx, value, path))
		return NULL;
	tag = find_type_key(cx, value, field, path);
	if (tag == NULL)
		return NULL;
	field->name = read_field_name(cx, schema_value_get(value, tag), path_key(path, tag));
	if (field->name == NULL)
		return NULL;
	path = psprintf("%s (%s %s)", path, tag, field->name);
	field->path = (char *) path;

	check_field_keys(cx, value, field, tag, path);
	read_options(cx, value, field, path);
	if (cx->error)
		return NULL;

	switch (field->kind)
	{
		case FIELD_SCALAR:
			read_column(cx, value, field, path);
			read_required_flag(cx, value, field, path);
			read_transforms(cx, value, field, path);
			read_default(cx, value, field, path);
			if (field->type == ST_ENUM)
				read_variants(cx, value, field, path);
			break;
		case FIELD_CUSTOM:
			read_custom(cx, value, field, path);
			read_column(cx, value, field, path);
			read_required_flag(cx, value, field, path);
			read_default(cx, value, field, path);
			break;
		case FIELD_GEO:
			read_geo(cx, value, field, path);
			read_required_flag(cx, value, field, path);
			break;
		case FIELD_MAP:
			read_map(cx, value, field, path);
			read_column(cx, value, field, path);
			read_required_flag(cx, value, field, path);
			break;
		case FIELD_OBJECT:
			field->children = read_fields(cx, value, path, true);
			break;
		case FIELD_JOIN:
			read_join(cx, value, field, path);
			break;
		case FIELD_AGGREGATE:
			read_aggregate(cx, value, field, path);
			break;
		case FIELD_CONSTANT:
			field->value = (SchemaValue *) read_required(cx, value, path, "value",
														 "Give the constant, e.g. value: book.");
			break;
	}
	if (field->namespace == NULL)
		field->namespace = pstrdup(cx->namespace);
	return cx->error ? NULL : field;
}

/* The `fields` list of a mapping: the top level, an object or a join. */
SchemaFieldList
read_fields(ReadContext *cx, const SchemaValue *mapping, const char *path,
			bool required)
{
	SchemaFieldList list = {0, NULL};
	const SchemaValue *value;
	char	   *list_path = path_key(path, "fields");

	if (cx->error)
		return list;
	value = required ? read_required(cx, mapping, path, "fields",
									 "List the document's fields under fields:.")
		: schema_value_get(mapping, "fields");
	if (value == NULL || !read_list(cx, value, list_path))
		return list;

	list.fields = palloc0(sizeof(SchemaField *) * Max(value->nitems, 1));
	for (int i = 0; i < value->nitems && !cx->error; i++)
	{
		SchemaField *field = read_field(cx, value->items[i], path_item(list_path, i));

		if (field == NULL)
			break;
		for (int j = 0; j < i; j++)
		{
			if (strcmp(field->name, list.fields[j]->name) == 0)
			{
				cx->error = schema_error(field->path, "Document keys must be unique within an object.",
										 "field name \"%s\" is already used by %s",
										 field->name, list.fields[j]->path);
				return list;
			}
		}
		list.fields[i] = field;
		list.nfields = i + 1;
	}
	return list;
}

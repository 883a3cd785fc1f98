/*-------------------------------------------------------------------------
 *
 * model.c
 *	  Interprets a definition tree as an IndexSchema: the top-level keys,
 *	  soft_delete, filters, primary keys and junction tables.  Fields are
 *	  read by fields.c.
 *
 * The rules follow flusso's version-1 format; where it is ambiguous the
 * stricter reading is taken and the error says what to write instead.
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

static const char *const top_keys[] = {
	"version", "table", "schema", "primary_key", "doc_id", "soft_delete",
	"filters", "fields", NULL
};

static const char *const soft_delete_keys[] = {"column", "field", "when", NULL};
static const char *const raw_filter_keys[] = {"raw", NULL};
static const char *const filter_keys[] = {"column", "op", "value", NULL};
static const char *const through_keys[] = {"table", "left_key", "right_key", NULL};

static const char *const filter_op_names_list[] = {
	"eq", "neq", "lt", "lte", "gt", "gte", "like", "ilike", "in", "not_in",
	"between", "is_null", "is_not_null", NULL
};

/* The value list of a filter, checked against its operator's arity. */
static void
read_filter_values(ReadContext *cx, SchemaFilter *filter, const SchemaValue *value,
				   const char *path)
{
	const char *op = schema_filter_op_name(filter->op);

	if (filter->op == FILTER_IN || filter->op == FILTER_NOT_IN ||
		filter->op == FILTER_BETWEEN)
	{
		if (value->kind != SV_SEQUENCE)
		{
			cx->error = schema_error(path, filter->op == FILTER_BETWEEN
									 ? "Write the bounds as a list: value: [lower, upper]."
									 : "Write the values as a list: value: [a, b].",
									 "op \"%s\" needs a list of values, found %s",
									 op, schema_value_kind_name(value->kind));
			return;
		}
		if (filter->op == FILTER_BETWEEN && value->nitems != 2)
		{
			cx->error = schema_error(path, "Write the bounds as a list: value: [lower, upper].",
									 "op \"between\" needs exactly 2 values, found %d",
									 value->nitems);
			return;
		}
		filter->nvalues = value->nitems;
		filter->values = palloc0(sizeof(char *) * Max(value->nitems, 1));
		for (int i = 0; i < value->nitems && !cx->error; i++)
			filter->values[i] = read_scalar_text(cx, value->items[i], path_item(path, i));
		return;
	}

	filter->nvalues = 1;
	filter->values = palloc(sizeof(char *));
	if (value->kind == SV_SEQUENCE)
	{
		cx->error = schema_error(path, "Use op: in to match any value of a list.",
								 "op \"%s\" needs a single value, found a list", op);
		return;
	}
	filter->values[0] = read_scalar_text(cx, value, path);
}

static void
read_filter(ReadContext *cx, SchemaFilter *filter, const SchemaValue *value,
			const char *path)
{
	const SchemaValue *op_value;
	const SchemaValue *operand;
	const char *suggestion;
	char	   *op;

	if (!read_mapping(cx, value, path))
		return;

	if (schema_value_get(value, "raw"))
	{
		read_check_keys(cx, value, path, raw_filter_keys);
		filter->op = FILTER_RAW;
		filter->raw = read_string(cx, value, path, "raw", true);
		if (filter->raw && filter->raw[0] == '\0')
			cx->error = schema_error(path_key(path, "raw"), NULL,
									 "a raw filter cannot be empty");
		return;
	}

	read_check_keys(cx, value, path, filter_keys);
	filter->column = read_identifier(cx, value, path, "column", true);
	op_value = read_required(cx, value, path, "op", NULL);
	op = cx->error ? NULL : read_string(cx, value, path, "op", true);
	if (op == NULL)
		return;
	if (!schema_filter_op_from_name(op, &filter->op))
	{
		suggestion = schema_suggest(op, filter_op_names_list);
		cx->error = schema_error(path_key(path, "op"),
								 suggestion ? psprintf("Did you mean \"%s\"?", suggestion)
								 : psprintf("Operators are: %s.",
											schema_join_words(filter_op_names_list)),
								 "unknown operator \"%s\"", op_value->str);
		return;
	}

	operand = schema_value_get(value, "value");
	if (filter->op == FILTER_IS_NULL || filter->op == FILTER_IS_NOT_NULL)
	{
		if (operand)
			cx->error = schema_error(path_key(path, "value"), "Remove \"value\".",
									 "op \"%s\" takes no value", op);
		return;
	}
	if (operand == NULL)
	{
		cx->error = schema_error(path, NULL, "op \"%s\" needs a value", op);
		return;
	}
	read_filter_values(cx, filter, operand, path_key(path, "value"));
}

/* An optional list of filters under key. */
SchemaFilterList
read_filters(ReadContext *cx, const SchemaValue *mapping, const char *path,
			 const char *key)
{
	SchemaFilterList list = {0, NULL};
	const SchemaValue *value = schema_value_get(mapping, key);
	char	   *list_path = path_key(path, key);

	if (cx->error || value == NULL || !read_list(cx, value, list_path))
		return list;
	list.filters = palloc0(sizeof(SchemaFilter) * Max(value->nitems, 1));
	for (int i = 0; i < value->nitems && !cx->error; i++)
		read_filter(cx, &list.filters[i], value->items[i], path_item(list_path, i));
	list.nfilters = value->nitems;
	return list;
}

/*
 * A primary key: one column name, or (an extension of the format) a list of
 * them for a composite key.  Both spellings produce the same list.
 */
ColumnList
read_column_list(ReadContext *cx, const SchemaValue *mapping, const char *path,
				 const char *key, bool required)
{
	ColumnList	list = {0, NULL};
	const SchemaValue *value;
	char	   *key_path = path_key(path, key);

	if (cx->error)
		return list;
	value = required ? read_required(cx, mapping, path, key, NULL)
		: schema_value_get(mapping, key);
	if (value == NULL)
		return list;

	if (value->kind != SV_SEQUENCE)
	{
		list.ncolumns = 1;
		list.columns = palloc(sizeof(char *));
		list.columns[0] = read_identifier_value(cx, value, key_path);
		return list;
	}
	if (value->nitems == 0)
	{
		cx->error = schema_error(key_path, NULL, "a primary key needs at least one column");
		return list;
	}
	list.columns = palloc(sizeof(char *) * value->nitems);
	for (int i = 0; i < value->nitems && !cx->error; i++)
	{
		list.columns[i] = read_identifier_value(cx, value->items[i], path_item(key_path, i));
		for (int j = 0; j < i && !cx->error; j++)
		{
			if (strcmp(list.columns[i], list.columns[j]) == 0)
				cx->error = schema_error(path_item(key_path, i), NULL,
										 "column \"%s\" is listed twice", list.columns[i]);
		}
		list.ncolumns = i + 1;
	}
	return list;
}

/* The junction table of a many_to_many join or aggregate. */
SchemaThrough *
read_through(ReadContext *cx, const SchemaValue *mapping, const char *path)
{
	const SchemaValue *value = schema_value_get(mapping, "through");
	char	   *through_path = path_key(path, "through");
	SchemaThrough *through;

	if (cx->error || value == NULL || !read_mapping(cx, value, through_path))
		return NULL;
	read_check_keys(cx, value, through_path, through_keys);
	through = palloc0(sizeof(SchemaThrough));
	through->table = read_identifier(cx, value, through_path, "table", true);
	through->left_key = read_identifier(cx, value, through_path, "left_key", true);
	through->right_key = read_identifier(cx, value, through_path, "right_key", true);
	return cx->error ? NULL : through;
}

static SoftDelete *
read_soft_delete(ReadContext *cx, const SchemaValue *root, const SchemaFieldList *fields)
{
	const SchemaValue *value = schema_value_get(root, "soft_delete");
	SoftDelete *soft_delete;

	if (cx->error || value == NULL || !read_mapping(cx, value, "soft_delete"))
		return NULL;
	read_check_keys(cx, value, "soft_delete", soft_delete_keys);
	if (cx->error)
		return NULL;

	if ((schema_value_get(value, "column") != NULL) ==
		(schema_value_get(value, "field") != NULL))
	{
		cx->error = schema_error("soft_delete",
								 "Use column: to test a column of the root table, or field: to test a top-level field.",
								 "give exactly one of \"column\" and \"field\"");
		return NULL;
	}

	soft_delete = palloc0(sizeof(SoftDelete));
	soft_delete->column = read_identifier(cx, value, "soft_delete", "column", false);
	if (schema_value_get(value, "field"))
	{
		soft_delete->field = read_field_name(cx, schema_value_get(value, "field"),
											 "soft_delete.field");
		if (soft_delete->field)
		{
			bool		found = false;

			for (int i = 0; i < fields->nfields; i++)
			{
				SchemaField *f = fields->fields[i];

				if (strcmp(f->name, soft_delete->field) == 0 &&
					(f->kind == FIELD_SCALAR || f->kind == FIELD_CUSTOM))
					found = true;
			}
			if (!found)
				cx->error = schema_error("soft_delete.field",
										 "Name a top-level scalar field, or use column: instead.",
										 "no top-level scalar field is named \"%s\"",
										 soft_delete->field);
		}
	}
	soft_delete->when = read_filters(cx, value, "soft_delete", "when");
	return cx->error ? NULL : soft_delete;
}

IndexSchema *
schema_from_value(const SchemaValue *root, SchemaError **error)
{
	ReadContext cx = {NULL, SCHEMA_DEFAULT_NAMESPACE};
	IndexSchema *schema = palloc0(sizeof(IndexSchema));
	const SchemaValue *version;

	*error = NULL;
	if (!read_mapping(&cx, root, ""))
	{
		*error = schema_error("", "A definition is a mapping with version, table and fields.",
							  "the definition must be a mapping, not %s",
							  schema_value_kind_name(root->kind));
		return NULL;
	}
	read_check_keys(&cx, root, "", top_keys);

	version = read_required(&cx, root, "", "version", "Start the definition with version: 1.");
	if (version && read_int(&cx, root, "", "version", &schema->version) &&
		schema->version != 1)
		cx.error = schema_error("version", "Only version 1 is supported.",
								"unsupported schema version %d", schema->version);

	if (!cx.error && schema_value_get(root, "doc_id"))
		cx.error = schema_error("doc_id",
								"The document id is always the primary key; remove doc_id.",
								"doc_id is not supported");

	schema->table = read_identifier(&cx, root, "", "table", true);
	schema->namespace = read_identifier(&cx, root, "", "schema", false);
	if (schema->namespace == NULL)
		schema->namespace = pstrdup(SCHEMA_DEFAULT_NAMESPACE);
	cx.namespace = schema->namespace;
	schema->primary_key = read_column_list(&cx, root, "", "primary_key", false);
	schema->filters = read_filters(&cx, root, "", "filters");
	schema->fields = read_fields(&cx, root, "", true);
	schema->soft_delete = read_soft_delete(&cx, root, &schema->fields);

	if (cx.error)
	{
		*error = cx.error;
		return NULL;
	}
	return schema;
}

/* Parse definition text (YAML or JSON) into a schema. */
IndexSchema *
schema_parse(const char *input, int len, int encoding, SchemaError **error)
{
	SchemaValue *root = schema_read(input, len, encoding, error);

	if (root == NULL)
		return NULL;
	return schema_from_value(root, error);
}

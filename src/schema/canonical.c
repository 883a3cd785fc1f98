/*-------------------------------------------------------------------------
 *
 * canonical.c
 *	  Writes an IndexSchema in its canonical form: JSON with every default
 *	  spelt out, fixed key order and normalized values.
 *
 * Two definitions that mean the same index print the same canonical text,
 * whatever their format (YAML or JSON), key order, formatting or spelt-out
 * defaults, so its hash serves as the index version.  Anything that changes
 * meaning changes the text.
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

static SchemaValue *fields_value(const SchemaFieldList *fields);

static SchemaValue *
filters_value(const SchemaFilterList *filters)
{
	SchemaValue *list = schema_value_new(SV_SEQUENCE, 0, 0);

	for (int i = 0; i < filters->nfilters; i++)
	{
		const SchemaFilter *filter = &filters->filters[i];
		SchemaValue *item = schema_value_mapping();

		if (filter->op == FILTER_RAW)
			schema_put_string(item, "raw", filter->raw);
		else
		{
			schema_put_string(item, "column", filter->column);
			schema_put_string(item, "op", schema_filter_op_name(filter->op));
			if (filter->op == FILTER_IN || filter->op == FILTER_NOT_IN ||
				filter->op == FILTER_BETWEEN)
				schema_value_set(item, "value",
								 schema_string_list(filter->values, filter->nvalues));
			else if (filter->nvalues == 1)
				schema_put_string(item, "value", filter->values[0]);
		}
		schema_value_append(list, NULL, item);
	}
	return list;
}

static SchemaValue *
columns_value(const ColumnList *columns)
{
	return schema_string_list(columns->columns, columns->ncolumns);
}

static SchemaValue *
through_value(const SchemaThrough *through)
{
	SchemaValue *value = schema_value_mapping();

	schema_put_string(value, "table", through->table);
	schema_put_string(value, "left_key", through->left_key);
	schema_put_string(value, "right_key", through->right_key);
	return value;
}

/* the parts of a join or aggregate that name the related rows */
static void
put_related(SchemaValue *out, const SchemaField *field)
{
	schema_put_string(out, "schema", field->namespace);
	schema_put_string(out, "table", field->table);
	if (field->column && field->kind == FIELD_JOIN)
		schema_put_string(out, "column", field->column);
	if (field->foreign_key)
		schema_put_string(out, "foreign_key", field->foreign_key);
	if (field->through)
		schema_value_set(out, "through", through_value(field->through));
	schema_value_set(out, "filters", filters_value(&field->filters));
}

static void
put_join(SchemaValue *out, const SchemaField *field)
{
	SchemaValue *order_by = schema_value_new(SV_SEQUENCE, 0, 0);

	schema_put_string(out, "type", schema_join_name(field->join));
	put_related(out, field);
	schema_value_set(out, "primary_key", columns_value(&field->primary_key));
	if (!schema_join_is_to_many(field->join))
		schema_put_bool(out, "required", field->required);
	for (int i = 0; i < field->norder_by; i++)
	{
		SchemaValue *item = schema_value_mapping();

		schema_put_string(item, "column", field->order_by[i].column);
		schema_put_string(item, "direction", field->order_by[i].descending ? "desc" : "asc");
		schema_value_append(order_by, NULL, item);
	}
	schema_value_set(out, "order_by", order_by);
	if (field->limit > 0)
		schema_put_int(out, "limit", field->limit);
	schema_value_set(out, "fields", fields_value(&field->children));
}

static void
put_aggregate(SchemaValue *out, const SchemaField *field)
{
	schema_put_string(out, "type", schema_aggregate_name(field->aggregate));
	put_related(out, field);
	if (field->column)
		schema_put_string(out, "column", field->column);
	if (field->aggregate == AGG_SUM || field->aggregate == AGG_MIN ||
		field->aggregate == AGG_MAX)
		schema_put_string(out, "value_type", schema_type_name(field->value_type));
	if (field->aggregate == AGG_IDS)
		schema_put_string(out, "element_type", schema_type_name(field->element_type));
}

/* column, required and default: what every column-reading leaf has */
static void
put_leaf(SchemaValue *out, const SchemaField *field)
{
	schema_put_string(out, "column", field->column);
	schema_put_bool(out, "required", field->required);
	if (field->default_value)
		schema_value_set(out, "default", field->default_value);
}

static SchemaValue *
field_value(const SchemaField *field)
{
	SchemaValue *out = schema_value_mapping();

	schema_put_string(out, "field", field->name);
	switch (field->kind)
	{
		case FIELD_SCALAR:
			{
				SchemaValue *transforms = schema_value_new(SV_SEQUENCE, 0, 0);

				schema_put_string(out, "type", schema_type_name(field->type));
				put_leaf(out, field);
				for (int i = 0; i < field->ntransforms; i++)
					schema_value_append(transforms, NULL,
										schema_value_string(field->transforms[i] == TRANSFORM_LOWERCASE
															? "lowercase" : "trim"));
				schema_value_set(out, "transforms", transforms);
				if (field->type == ST_ENUM)
					schema_value_set(out, "variants",
									 schema_string_list(field->variants, field->nvariants));
			}
			break;
		case FIELD_CUSTOM:
			schema_put_string(out, "type", "custom");
			put_leaf(out, field);
			schema_value_set(out, "postgres",
							 schema_string_list(field->custom_types, field->ncustom_types));
			schema_put_string(out, "opensearch", field->custom_opensearch);
			break;
		case FIELD_GEO:
			schema_put_string(out, "type", "geo");
			if (field->lat)
			{
				schema_put_string(out, "lat", field->lat);
				schema_put_string(out, "lon", field->lon);
			}
			else
				schema_put_string(out, "column", field->column);
			schema_put_bool(out, "required", field->required);
			break;
		case FIELD_MAP:
			schema_put_string(out, "type", "map");
			schema_put_string(out, "values", schema_type_name(field->type));
			put_leaf(out, field);
			break;
		case FIELD_OBJECT:
			schema_put_string(out, "type", "object");
			schema_value_set(out, "fields", fields_value(&field->children));
			break;
		case FIELD_JOIN:
			put_join(out, field);
			break;
		case FIELD_AGGREGATE:
			put_aggregate(out, field);
			break;
		case FIELD_CONSTANT:
			schema_put_string(out, "type", "constant");
			schema_value_set(out, "value", field->value);
			break;
	}
	if (field->options && field->options->nitems > 0)
		schema_value_set(out, "options", field->options);
	return out;
}

static SchemaValue *
fields_value(const SchemaFieldList *fields)
{
	SchemaValue *list = schema_value_new(SV_SEQUENCE, 0, 0);

	for (int i = 0; i < fields->nfields; i++)
		schema_value_append(list, NULL, field_value(fields->fields[i]));
	return list;
}

char *
schema_canonical_json(const IndexSchema *schema)
{
	SchemaValue *root = schema_value_mapping();
	StringInfoData buf;

	schema_put_int(root, "version", schema->version);
	schema_put_string(root, "schema", schema->namespace);
	schema_put_string(root, "table", schema->table);
	schema_value_set(root, "primary_key", columns_value(&schema->primary_key));
	if (schema->soft_delete)
	{
		SchemaValue *soft_delete = schema_value_mapping();

		if (schema->soft_delete->column)
			schema_put_string(soft_delete, "column", schema->soft_delete->column);
		else
			schema_put_string(soft_delete, "field", schema->soft_delete->field);
		schema_value_set(soft_delete, "when", filters_value(&schema->soft_delete->when));
		schema_value_set(root, "soft_delete", soft_delete);
	}
	schema_value_set(root, "filters", filters_value(&schema->filters));
	schema_value_set(root, "fields", fields_value(&schema->fields));

	initStringInfo(&buf);
	schema_value_to_json(&buf, root, true);
	return buf.data;
}

/* The canonical JSON of a field, without its own fields when shallow. */
static char *
field_json(const SchemaField *field, bool shallow)
{
	SchemaField copy = *field;
	StringInfoData buf;

	if (shallow)
	{
		copy.children.nfields = 0;
		copy.children.fields = NULL;
	}
	initStringInfo(&buf);
	schema_value_to_json(&buf, field_value(&copy), false);
	return buf.data;
}

/*
 * Does every field of before have its like in after, by name, meaning the
 * same, whose own fields (of an object or a join) after holds the same way?
 * *added counts the fields after has besides.
 */
static bool
fields_kept(const SchemaFieldList *before, const SchemaFieldList *after, int *added)
{
	*added += after->nfields - before->nfields;
	for (int i = 0; i < before->nfields; i++)
	{
		const SchemaField *old = before->fields[i];
		const SchemaField *new = NULL;

		for (int j = 0; j < after->nfields && new == NULL; j++)
		{
			if (strcmp(after->fields[j]->name, old->name) == 0)
				new = after->fields[j];
		}
		if (new == NULL || new->kind != old->kind)
			return false;
		if (old->kind == FIELD_OBJECT || old->kind == FIELD_JOIN)
		{
			if (strcmp(field_json(old, true), field_json(new, true)) != 0 ||
				!fields_kept(&old->children, &new->children, added))
				return false;
		}
		else if (strcmp(field_json(old, false), field_json(new, false)) != 0)
			return false;
	}
	return true;
}

/*
 * Is after the definition before with fields added, and nothing else
 * changed: the same root, keys, filters and soft delete, every field of
 * before the same in after (at any depth, in any order), and at least one
 * field more?  Then every document after builds holds what before's did,
 * and more.
 */
bool
schema_adds_fields_only(const IndexSchema *before, const IndexSchema *after)
{
	IndexSchema before_root = *before;
	IndexSchema after_root = *after;
	int			added = 0;

	before_root.fields.nfields = after_root.fields.nfields = 0;
	before_root.fields.fields = after_root.fields.fields = NULL;
	if (strcmp(schema_canonical_json(&before_root), schema_canonical_json(&after_root)) != 0)
		return false;
	return fields_kept(&before->fields, &after->fields, &added) && added > 0;
}

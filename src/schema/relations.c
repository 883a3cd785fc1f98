/*-------------------------------------------------------------------------
 *
 * relations.c
 *	  Reads the fields that fold in related tables: joins (their key
 *	  sibling, order, limit and nested fields) and aggregates (their key,
 *	  column and result types).
 *
 * Which keys such a field may have at all is checked by fields.c before
 * these run; here the rules between the keys are enforced.
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

static const char *const order_by_keys[] = {"column", "direction", NULL};

static void
read_order_by(ReadContext *cx, const SchemaValue *value, SchemaField *field,
			  const char *path)
{
	const SchemaValue *list = schema_value_get(value, "order_by");
	char	   *list_path = path_key(path, "order_by");

	if (cx->error || list == NULL || !read_list(cx, list, list_path))
		return;
	field->order_by = palloc0(sizeof(SchemaOrderBy) * Max(list->nitems, 1));
	for (int i = 0; i < list->nitems && !cx->error; i++)
	{
		const SchemaValue *item = list->items[i];
		char	   *item_path = path_item(list_path, i);
		char	   *direction;

		if (!read_mapping(cx, item, item_path))
			return;
		read_check_keys(cx, item, item_path, order_by_keys);
		field->order_by[i].column = read_identifier(cx, item, item_path, "column", true);
		direction = read_string(cx, item, item_path, "direction", false);
		if (direction && strcmp(direction, "desc") == 0)
			field->order_by[i].descending = true;
		else if (direction && strcmp(direction, "asc") != 0)
			cx->error = schema_error(path_key(item_path, "direction"),
									 "Use asc or desc.",
									 "unknown direction \"%s\"", direction);
		field->norder_by = i + 1;
	}
}

void
read_join(ReadContext *cx, const SchemaValue *value, SchemaField *field,
		  const char *path)
{
	field->table = read_identifier(cx, value, path, "table", true);
	field->namespace = read_identifier(cx, value, path, "schema", false);
	field->primary_key = read_column_list(cx, value, path, "primary_key", true);
	field->required_set = read_bool(cx, value, path, "required", &field->required);

	switch (field->join)
	{
		case JOIN_BELONGS_TO:
			read_column(cx, value, field, path);
			break;
		case JOIN_HAS_ONE:
		case JOIN_HAS_MANY:
			if (read_required(cx, value, path, "foreign_key", join_key_hints[field->join]))
				field->foreign_key = read_identifier(cx, value, path, "foreign_key", true);
			break;
		case JOIN_MANY_TO_MANY:
			if (read_required(cx, value, path, "through", join_key_hints[field->join]))
				field->through = read_through(cx, value, path);
			break;
	}

	field->filters = read_filters(cx, value, path, "filters");
	read_order_by(cx, value, field, path);
	if (read_int(cx, value, path, "limit", &field->limit) && field->limit < 1)
		cx->error = schema_error(path_key(path, "limit"), "Omit limit to fold in every row.",
								 "limit must be at least 1, not %d", field->limit);
	field->children = read_fields(cx, value, path, true);
}

void
read_aggregate(ReadContext *cx, const SchemaValue *value, SchemaField *field,
			   const char *path)
{
	AggregateKind agg = field->aggregate;

	field->table = read_identifier(cx, value, path, "table", true);
	field->namespace = read_identifier(cx, value, path, "schema", false);
	if (!cx->error &&
		(schema_value_get(value, "foreign_key") != NULL) ==
		(schema_value_get(value, "through") != NULL))
	{
		cx->error = schema_error(path,
								 "Use foreign_key for rows that point back at this one, or through for a junction table.",
								 "give exactly one of \"foreign_key\" and \"through\"");
		return;
	}
	field->foreign_key = read_identifier(cx, value, path, "foreign_key", false);
	field->through = read_through(cx, value, path);

	if (agg == AGG_SUM || agg == AGG_AVG || agg == AGG_MIN || agg == AGG_MAX)
		field->column = read_identifier(cx, value, path, "column", true);
	if ((agg == AGG_SUM || agg == AGG_MIN || agg == AGG_MAX) &&
		read_required(cx, value, path, "value_type",
					  "Give the type of the result, which is the column's, e.g. value_type: decimal."))
		read_scalar_type(cx, value, path, "value_type", &field->value_type);
	if (agg == AGG_IDS &&
		read_required(cx, value, path, "element_type",
					  "Give the type of the collected primary keys, e.g. element_type: long."))
		read_scalar_type(cx, value, path, "element_type", &field->element_type);
	field->filters = read_filters(cx, value, path, "filters");
}


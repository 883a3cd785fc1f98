/*-------------------------------------------------------------------------
 *
 * draft_walk.c
 *	  The walk of a draft (flusso_draft, api/draft.c): a table's columns,
 *	  as fields, and its foreign keys, as joins, each with its table's
 *	  fields one level less deep, depth levels deep; read from the
 *	  catalog alone (draft_tables.c).
 *
 * Every column becomes a field named as the column, of the first field
 * type that reads the column's type (binding/types.c, the table flusso_check
 * judges by), except that text columns that are keys or character(n) are
 * drafted as keyword, other text as text, and columns of an enum type as
 * enum with the type's labels, in order, as variants; required comes from
 * NOT NULL.  A column no field type reads, or whose name is no flusso
 * identifier, is left out with a comment saying why.
 *
 * Foreign keys are followed depth levels deep, both ways: one from the
 * table is a belongs_to, one into it a has_many (a has_one when its column
 * is unique), and one from a junction table (draft_tables.c) a many_to_many
 * through it.  A join never walks back along the key it arrived by.  Only
 * single-column foreign keys that point at a single-column primary key can
 * be written in the format; the others are mentioned and left out.  A
 * join that would take the draft past its size bound is left out whole,
 * with a note.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "binding/types.h"
#include "design/draft_tables.h"
#include "design/draft_walk.h"
#include "design/yaml_writer.h"
#include "schema/names.h"
#include "schema/schema.h"
#include "util/access.h"

/* the joins, at the end of the file: they walk their tables' fields */
static void draft_belongs_to(DraftContext *cx, FieldList *list, const DraftForeignKey *fk,
							 int depth);
static void draft_has_many(DraftContext *cx, FieldList *list, const DraftForeignKey *fk,
						   List *incoming, Oid relid, int depth);

/* What a value costs, the most the emitter can write for it at that level. */
void
draft_count_cost(DraftContext *cx, const char *key, const SchemaValue *value, int level)
{
	cx->bytes += 2 * level + 4 + (key ? strlen(key) : 0);
	cx->values += key ? 2 : 1;
	if (value->kind == SV_SEQUENCE || value->kind == SV_MAPPING)
	{
		for (int i = 0; i < value->nitems; i++)
			draft_count_cost(cx, value->keys[i], value->items[i], level + 1);
	}
	else
		cx->bytes += 4 * strlen(value->str ? value->str : "null") + 2;
}

static bool
draft_over_budget(DraftContext *cx)
{
	return cx->bytes > DRAFT_MAX_BYTES || cx->values > DRAFT_MAX_VALUES;
}

/* A comment on what list's table was drafted with: where, then what. */
void
draft_add_note(DraftContext *cx, FieldList *list, const char *text)
{
	char	   *line = design_comment_text(psprintf("%s: %s",
													list->path[0] ? list->path : "root",
													text));

	cx->notes = lappend(cx->notes, line);
	cx->bytes += strlen(line) + 3;
}

/* Append item, a mapping, to list's fields, and count what it costs. */
static void
add_field(DraftContext *cx, FieldList *list, SchemaValue *item)
{
	schema_value_append(list->items, NULL, item);
	draft_count_cost(cx, NULL, item, list->level);
}

/*
 * Take name for a field of list, or when it is taken name_2, name_3, ...,
 * cut short enough that the number fits in a name.  A column's own name is
 * never cut (columns are drafted first, and a table's are distinct); a
 * join's, made of a table's and a column's, is cut to the longest a field
 * name may be.
 */
static char *
draft_take_name(FieldList *list, const char *name)
{
	char	   *candidate = pnstrdup(name, SCHEMA_MAX_NAME);
	ListCell   *lc;

	for (int n = 2;; n++)
	{
		bool		taken = false;

		foreach(lc, list->names)
		{
			if (strcmp(lfirst(lc), candidate) == 0)
				taken = true;
		}
		if (!taken)
			break;
		candidate = psprintf("%.*s_%d", SCHEMA_MAX_NAME - 8, name, n);
	}
	list->names = lappend(list->names, candidate);
	return candidate;
}

/* "publisher" of "publisher_id"; NULL when the column has no such suffix. */
static char *
draft_strip_id(const char *column)
{
	size_t		len = strlen(column);

	if (len > 3 && strcmp(column + len - 3, "_id") == 0)
		return pnstrdup(column, len - 3);
	return NULL;
}

/* The labels of an enum type in their order, or NULL if one cannot be a variant. */
static List *
enum_labels(Oid type)
{
	MemoryContext caller = CurrentMemoryContext;
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(type)};
	List	   *labels = NIL;

	SPI_connect();
	if (SPI_execute_with_args("SELECT enumlabel::pg_catalog.text FROM pg_catalog.pg_enum "
							  "WHERE enumtypid OPERATOR(pg_catalog.=) $1 ORDER BY enumsortorder",
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the labels of type %u", type);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *label = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);

		/* what fields.c refuses as a variant */
		if (strspn(label, " \t") == strlen(label) || strstr(label, "=>") || strchr(label, '\n'))
		{
			labels = NIL;
			break;
		}
		labels = lappend(labels, MemoryContextStrdup(caller, label));
	}
	SPI_finish();
	return labels;
}

/* The field type a column is drafted as; false when no field type reads it. */
static bool
field_type(Oid column_type, bool key, ScalarType *type)
{
	Oid			t = type_element(column_type);

	if (type_is_enum(t))
		*type = ST_ENUM;
	else if (type_is_text(t))
		*type = (key || t == BPCHAROID) ? ST_KEYWORD : ST_TEXT;
	else
	{
		for (int i = ST_UUID; i <= ST_JSON; i++)
		{
			if (type_accepts((ScalarType) i, column_type))
			{
				*type = (ScalarType) i;
				return true;
			}
		}
		return false;
	}
	return true;
}

static void
draft_column(DraftContext *cx, FieldList *list, Oid relid, const DraftColumn *column,
			 bool key)
{
	ScalarType	type;
	SchemaValue *item;

	if (!schema_valid_identifier(column->name))
	{
		draft_add_note(cx, list, psprintf("left out column %s of %s, whose name is not a flusso identifier (^[a-z_][a-z0-9_]*$)",
									quote_identifier(column->name), draft_table_display(relid)));
		return;
	}
	if (!field_type(column->type, key, &type))
	{
		draft_add_note(cx, list, psprintf("left out column %s of %s, of type %s, which no field type reads (a custom field can)",
									quote_identifier(column->name), draft_table_display(relid),
									format_type_be(column->type)));
		return;
	}
	item = schema_value_mapping();
	schema_put_string(item, schema_type_name(type), draft_take_name(list, column->name));
	schema_put_bool(item, "required", column->notnull);
	if (type == ST_ENUM)
	{
		List	   *labels = enum_labels(type_element(column->type));
		SchemaValue *variants = schema_value_new(SV_SEQUENCE, 0, 0);
		ListCell   *lc;

		foreach(lc, labels)
			schema_value_append(variants, NULL, schema_value_string(lfirst(lc)));
		if (labels != NIL)
			schema_value_append(item, "variants", variants);
		else
			draft_add_note(cx, list, psprintf("column %s: a label of type %s cannot be a variant, so none are listed",
										quote_identifier(column->name),
										format_type_be(type_element(column->type))));
	}
	add_field(cx, list, item);
}

/* The attnums of the table's key columns and of its foreign keys' columns. */
static bool
is_key_column(List *keys, List *outgoing, AttrNumber attnum)
{
	ListCell   *lc;

	if (list_member_int(keys, attnum))
		return true;
	foreach(lc, outgoing)
	{
		if (((DraftForeignKey *) lfirst(lc))->from_attnum == attnum)
			return true;
	}
	return false;
}

/* "id" or [a, b]: a primary key as the format writes it */
SchemaValue *
draft_key_value(Oid relid, List *key)
{
	SchemaValue *columns;
	ListCell   *lc;

	if (list_length(key) == 1)
		return schema_value_string(get_attname(relid, linitial_int(key), false));
	columns = schema_value_new(SV_SEQUENCE, 0, 0);
	foreach(lc, key)
		schema_value_append(columns, NULL,
							schema_value_string(get_attname(relid, lfirst_int(lc), false)));
	return columns;
}

/* Can every name of key be written in the format? */
bool
draft_names_valid(Oid relid, List *key)
{
	ListCell   *lc;

	foreach(lc, key)
	{
		if (!schema_valid_identifier(get_attname(relid, lfirst_int(lc), false)))
			return false;
	}
	return true;
}

/*
 * The fields of table relid, its items nesting at level: its columns, and
 * when depth is above 0 its joins, each with its own fields one level less
 * deep.
 */
SchemaValue *
draft_fields(DraftContext *cx, const char *path, int level, Oid relid, int depth,
			 Arrival arrival)
{
	FieldList	list = {schema_value_new(SV_SEQUENCE, 0, 0), path, level, NIL};
	List	   *key = draft_primary_key(relid);
	List	   *outgoing = draft_foreign_keys(relid, false);
	List	   *incoming = depth > 0 ? draft_foreign_keys(relid, true) : NIL;
	ListCell   *lc;

	check_stack_depth();
	foreach(lc, draft_columns(relid))
	{
		DraftColumn *column = lfirst(lc);

		draft_column(cx, &list, relid, column, is_key_column(key, outgoing, column->attnum));
	}
	if (depth > 0)
	{
		foreach(lc, outgoing)
		{
			DraftForeignKey *fk = lfirst(lc);

			if (!(fk->conoid == arrival.conoid && !arrival.referenced))
				draft_belongs_to(cx, &list, fk, depth);
		}
		foreach(lc, incoming)
		{
			DraftForeignKey *fk = lfirst(lc);

			if (!(fk->conoid == arrival.conoid && arrival.referenced))
				draft_has_many(cx, &list, fk, incoming, relid, depth);
		}
	}
	return list.items;
}

/*
 * Why the table a join reads cannot be written as one, or NULL: its name,
 * its schema's or its key's is no flusso identifier, or it has no key.
 */
static char *
join_table_problem(Oid relid)
{
	List	   *key = draft_primary_key(relid);

	if (!schema_valid_identifier(get_rel_name(relid)) ||
		!schema_valid_identifier(get_namespace_name(get_rel_namespace(relid))))
		return "its name is not a flusso identifier";
	if (key == NIL)
		return "it has no primary key, which a join needs";
	if (!draft_names_valid(relid, key))
		return "a column of its primary key is not a flusso identifier";
	return NULL;
}

/* The keys every join has: table, schema if not the root's, primary key. */
static void
put_join_table(DraftContext *cx, SchemaValue *join, Oid relid)
{
	char	   *nspname = get_namespace_name(get_rel_namespace(relid));

	schema_put_string(join, "table", get_rel_name(relid));
	if (strcmp(nspname, cx->root_nspname) != 0)
		schema_put_string(join, "schema", nspname);
	schema_value_append(join, "primary_key", draft_key_value(relid, draft_primary_key(relid)));
}

/*
 * Add join, named name, to list with the fields of relid, unless that would
 * take the draft past its size bound: then nothing of it stays, the name
 * included, and a comment (for the first few) says it was left out.
 */
static void
add_join(DraftContext *cx, FieldList *list, SchemaValue *join, const char *name,
		 const char *guess, Oid relid, int depth, Arrival arrival)
{
	Size		bytes = cx->bytes;
	int			values = cx->values;
	int			nnotes = list_length(cx->notes);
	int			size_left_out = cx->size_left_out;
	SchemaValue *fields;

	if (!draft_over_budget(cx))
	{
		draft_add_note(cx, list, guess);
		draft_count_cost(cx, NULL, join, list->level);
		fields = draft_fields(cx, list->path[0] ? psprintf("%s.%s", list->path, name) : name,
							  list->level + 2, relid, depth - 1, arrival);
		if (!draft_over_budget(cx))
		{
			schema_value_append(join, "fields", fields);
			schema_value_append(list->items, NULL, join);
			return;
		}
		cx->bytes = bytes;
		cx->values = values;
		cx->notes = list_truncate(cx->notes, nnotes);
		cx->size_left_out = size_left_out;
	}
	list->names = list_delete_last(list->names);
	if (++cx->size_left_out <= DRAFT_SIZE_NOTES)
		draft_add_note(cx, list, psprintf("left out for size, %s", guess));
}

static void
draft_belongs_to(DraftContext *cx, FieldList *list, const DraftForeignKey *fk, int depth)
{
	char	   *column = get_attname(fk->from_relid, fk->from_attnum, false);
	char	   *problem = join_table_problem(fk->to_relid);
	char	   *name;
	SchemaValue *join;

	if (problem == NULL && fk->ncolumns != 1)
		problem = psprintf("it has %d columns, and a join follows one", fk->ncolumns);
	if (problem == NULL && draft_single_key(fk->to_relid) != fk->to_attnum)
		problem = "it does not point at a single-column primary key";
	if (problem == NULL && !schema_valid_identifier(column))
		problem = "its column is not a flusso identifier";
	if (problem)
	{
		draft_add_note(cx, list, psprintf("left out foreign key %s to %s: %s",
									quote_identifier(fk->conname),
									draft_table_display(fk->to_relid), problem));
		return;
	}
	name = draft_strip_id(column);
	name = draft_take_name(list, name ? name : get_rel_name(fk->to_relid));
	join = schema_value_mapping();
	schema_put_string(join, "belongs_to", name);
	schema_put_string(join, "column", column);
	put_join_table(cx, join, fk->to_relid);
	schema_put_bool(join, "required", draft_column_notnull(fk->from_relid, fk->from_attnum));
	add_join(cx, list, join, name,
			 psprintf("guessed belongs_to %s (%s), from foreign key %s",
					  name, draft_table_display(fk->to_relid), quote_identifier(fk->conname)),
			 fk->to_relid, depth, (Arrival) {fk->conoid, true});
}

/* The other columns of a junction than its two keys, for the comment. */
static char *
junction_extra_columns(const DraftForeignKey *near, const DraftForeignKey *far)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, draft_columns(near->from_relid))
	{
		DraftColumn *column = lfirst(lc);

		if (column->attnum != near->from_attnum && column->attnum != far->from_attnum)
			appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", quote_identifier(column->name));
	}
	return buf.len ? psprintf(" (its other columns are left out: %s)", buf.data) : "";
}

/* How many of incoming come from table relid. */
static int
keys_from(List *incoming, Oid relid)
{
	ListCell   *lc;
	int			n = 0;

	foreach(lc, incoming)
	{
		if (((DraftForeignKey *) lfirst(lc))->from_relid == relid)
			n++;
	}
	return n;
}

/*
 * A many_to_many through near's junction; false when it cannot be written.
 * It is named for the table it reaches, or, when the junction links this
 * table's rows more than one way (friends of people), for its right key.
 */
static bool
draft_many_to_many(DraftContext *cx, FieldList *list, const DraftForeignKey *near,
				   List *incoming, int depth)
{
	DraftForeignKey *far = draft_junction_far_key(near);
	char	   *left;
	char	   *right;
	char	   *name;
	SchemaValue *join;
	SchemaValue *through;

	if (far == NULL || join_table_problem(far->to_relid) != NULL ||
		draft_single_key(far->to_relid) != far->to_attnum ||
		get_rel_namespace(far->to_relid) != get_rel_namespace(near->from_relid))
		return false;
	left = get_attname(near->from_relid, near->from_attnum, false);
	right = get_attname(far->from_relid, far->from_attnum, false);
	if (!schema_valid_identifier(left) || !schema_valid_identifier(right))
		return false;

	name = draft_take_name(list, keys_from(incoming, near->from_relid) > 1
					 ? (draft_strip_id(right) ? draft_strip_id(right) : right)
					 : get_rel_name(far->to_relid));
	join = schema_value_mapping();
	schema_put_string(join, "many_to_many", name);
	put_join_table(cx, join, far->to_relid);
	through = schema_value_mapping();
	schema_put_string(through, "table", get_rel_name(near->from_relid));
	schema_put_string(through, "left_key", left);
	schema_put_string(through, "right_key", right);
	schema_value_append(join, "through", through);
	add_join(cx, list, join, name,
			 psprintf("guessed many_to_many %s (%s through %s), from foreign keys %s and %s%s",
					  name, draft_table_display(far->to_relid),
					  draft_table_display(near->from_relid),
					  quote_identifier(near->conname), quote_identifier(far->conname),
					  junction_extra_columns(near, far)),
			 far->to_relid, depth, (Arrival) {far->conoid, true});
	return true;
}

/*
 * A has_many (or has_one, or many_to_many) for a foreign key into relid,
 * named for the table it reads, or for that and the key's column when the
 * table points here more than one way or is this one (people_by_manager).
 */
static void
draft_has_many(DraftContext *cx, FieldList *list, const DraftForeignKey *fk, List *incoming,
			   Oid relid, int depth)
{
	char	   *column = get_attname(fk->from_relid, fk->from_attnum, false);
	char	   *child = get_rel_name(fk->from_relid);
	char	   *problem = NULL;
	const char *verb;
	char	   *name;
	bool		one;
	SchemaValue *join;

	if (fk->ncolumns != 1 || draft_single_key(relid) != fk->to_attnum)
		problem = "it does not point at the single-column primary key of this table";
	else if (draft_many_to_many(cx, list, fk, incoming, depth))
		return;
	else if ((problem = join_table_problem(fk->from_relid)) == NULL &&
			 !schema_valid_identifier(column))
		problem = "its column is not a flusso identifier";
	if (problem)
	{
		draft_add_note(cx, list, psprintf("left out foreign key %s of %s: %s",
									quote_identifier(fk->conname),
									draft_table_display(fk->from_relid), problem));
		return;
	}
	one = draft_column_unique(fk->from_relid, fk->from_attnum);
	verb = one ? "has_one" : "has_many";
	name = draft_take_name(list, keys_from(incoming, fk->from_relid) > 1 || fk->from_relid == relid
					 ? psprintf("%s_by_%s", child, draft_strip_id(column) ? draft_strip_id(column) : column)
					 : child);
	join = schema_value_mapping();
	schema_put_string(join, verb, name);
	put_join_table(cx, join, fk->from_relid);
	schema_put_string(join, "foreign_key", column);
	add_join(cx, list, join, name,
			 psprintf("guessed %s %s (%s), from foreign key %s%s",
					  verb, name, draft_table_display(fk->from_relid),
					  quote_identifier(fk->conname),
					  one ? psprintf(" (%s is unique)", quote_identifier(column)) : ""),
			 fk->from_relid, depth, (Arrival) {fk->conoid, false});
}

/*-------------------------------------------------------------------------
 *
 * draft_joins.c
 *	  The joins of a draft: a belongs_to for a foreign key out of a table,
 *	  a has_many or has_one for one into it, a many_to_many through a
 *	  junction, each with its table's fields one level less deep, and left
 *	  out whole (with a note) when it cannot be written in the format or
 *	  would take the draft past its size bound.  draft.c owns the rest.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/lsyscache.h"
#include "utils/builtins.h"

#include "design/draft.h"
#include "schema/schema.h"

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

void
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
void
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

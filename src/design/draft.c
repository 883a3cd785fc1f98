/*-------------------------------------------------------------------------
 *
 * draft.c
 *	  flusso_draft(root, depth): a starting definition for an index on a
 *	  table, read from the catalog alone, as YAML with comments that say
 *	  what was guessed.  What it reads of the catalog is draft_catalog.c's.
 *
 * Every column becomes a field named as the column, of the first field
 * type that reads the column's type (binding/types.c, the table flusso_check
 * judges by), except that text columns that are keys or character(n) are
 * drafted as keyword, other text as text, and columns of an enum type as
 * enum with the type's labels, in order, as variants; required comes from
 * NOT NULL.  A column no field type reads, or whose name is no flusso
 * identifier, is left out with a comment saying why.
 *
 * Foreign keys are followed depth levels deep, both ways (draft_joins.c): one from the
 * table is a belongs_to, one into it a has_many (a has_one when its column
 * is unique), and one from a junction table (draft_catalog.c) a many_to_many
 * through it.  A join never walks back along the key it arrived by.  Only
 * single-column foreign keys that point at a single-column primary key can
 * be written in the format; the others are mentioned and left out.
 *
 * The text depends on the catalog only, in attnum and constraint name
 * order, so the same database always drafts the same definition, and it
 * checks clean against that database: flusso_create_index takes it as it
 * is.
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
#include "design/draft.h"
#include "design/draft_catalog.h"
#include "design/yaml_writer.h"
#include "schema/names.h"
#include "schema/schema.h"
#include "util/access.h"

#define DRAFT_MAX_DEPTH 3

PG_FUNCTION_INFO_V1(flusso_draft);

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

bool
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
char *
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
char *
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

/* The root must be a table flusso can index, named as the format names tables. */
static void
check_root(Oid relid)
{
	char		relkind = get_rel_relkind(relid);
	char	   *relname = get_rel_name(relid);

	if (relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", draft_table_display(relid)),
				 errdetail("flusso indexes are built from tables: only their changes can be streamed.")));
	if (!schema_valid_identifier(relname) ||
		!schema_valid_identifier(get_namespace_name(get_rel_namespace(relid))))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("table %s cannot be named in an index definition", draft_table_display(relid)),
				 errdetail("Definitions name schemas and tables with identifiers matching ^[a-z_][a-z0-9_]*$.")));
}

/* The comment the draft starts with: what it is and how to read the notes. */
static List *
draft_header(Oid relid, int depth, DraftContext *cx)
{
	List	   *lines = NIL;

	lines = lappend(lines, design_comment_text(psprintf("A draft of an index on %s, read from the catalog by flusso_draft,",
														draft_table_display(relid))));
	lines = lappend(lines, depth == 0 ? "following no foreign key.  Guessed: the field type of each column"
					: psprintf("following foreign keys %d level%s deep.  Guessed: the field type of each column",
							   depth, depth == 1 ? "" : "s"));
	lines = lappend(lines, "(text as text; keys, character(n) as keyword; enum types as enum),");
	lines = lappend(lines, depth == 0 ? "and required from NOT NULL."
					: "required from NOT NULL, and a join per foreign key, each noted below.");
	if (cx->notes != NIL)
	{
		lines = lappend(lines, "");
		lines = lappend(lines, "Notes, by where they apply (names as SQL writes them, any character that");
		lines = lappend(lines, "is not printable ASCII escaped):");
		lines = list_concat(lines, cx->notes);
	}
	if (cx->size_left_out > DRAFT_SIZE_NOTES)
		lines = lappend(lines, psprintf("... and %d more joins left out for size",
										cx->size_left_out - DRAFT_SIZE_NOTES));
	if (cx->size_left_out > 0)
		lines = lappend(lines, psprintf("Joins were left out to keep the draft within %d kB and %d values, which",
										DRAFT_MAX_BYTES / 1024, DRAFT_MAX_VALUES));
	if (cx->size_left_out > 0)
		lines = lappend(lines, "flusso_create_index takes: draft with a smaller depth, or add them by hand.");
	return lines;
}

/* flusso_draft(root regclass, depth int) RETURNS text */
Datum
flusso_draft(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	int			depth = PG_GETARG_INT32(1);
	DraftContext cx = {0};
	FieldList	root = {NULL, "", 0, NIL};
	SchemaValue *document;
	List	   *key;
	char	   *text;

	flusso_require_admin();
	if (depth < 0 || depth > DRAFT_MAX_DEPTH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("depth must be between 0 and %d, not %d", DRAFT_MAX_DEPTH, depth),
				 errhint("depth is how many levels of foreign keys the draft follows; 0 drafts the table's own columns.")));
	check_root(relid);
	cx.root_nspname = get_namespace_name(get_rel_namespace(relid));
	key = draft_primary_key(relid);

	document = schema_value_mapping();
	schema_put_int(document, "version", 1);
	schema_put_string(document, "schema", cx.root_nspname);
	schema_put_string(document, "table", get_rel_name(relid));
	if (key == NIL)
		draft_add_note(&cx, &root, "no primary key: declare primary_key (NOT NULL columns a unique index covers)");
	else if (!draft_names_valid(relid, key))
		draft_add_note(&cx, &root, "the primary key has a column that is not a flusso identifier: declare another primary_key");
	else
		schema_value_append(document, "primary_key", draft_key_value(relid, key));
	draft_count_cost(&cx, NULL, document, 0);
	schema_value_append(document, "fields",
						draft_fields(&cx, "", 1, relid, depth, (Arrival) {InvalidOid, false}));

	text = design_yaml_text(document, draft_header(relid, depth, &cx));
	if (strlen(text) > SCHEMA_MAX_INPUT || document->weight > SCHEMA_MAX_VALUES)
		elog(ERROR, "the draft of %s outgrew its bound: %zu bytes, %d values",
			 draft_table_display(relid), strlen(text), document->weight);
	PG_RETURN_TEXT_P(cstring_to_text(text));
}

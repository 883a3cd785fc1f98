/*-------------------------------------------------------------------------
 *
 * draft.c
 *	  flusso_draft(root, depth): a starting definition for an index on a
 *	  table, read from the catalog alone, as YAML with comments that say
 *	  what was guessed.  What it reads of the catalog is catalog.c's.
 *
 * Every column becomes a field named as the column, of the first field
 * type that reads the column's type (check/types.c, the table flusso_check
 * judges by), except that text columns that are keys or character(n) are
 * drafted as keyword, other text as text, and columns of an enum type as
 * enum with the type's labels, in order, as variants; required comes from
 * NOT NULL.  A column no field type reads, or whose name is no flusso
 * identifier, is left out with a comment saying why.
 *
 * Foreign keys are followed depth levels deep, both ways: one from the
 * table is a belongs_to, one into it a has_many (a has_one when its column
 * is unique), and one from a junction table (catalog.c) a many_to_many
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
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/lsyscache.h"

#include "check/types.h"
#include "design/catalog.h"
#include "index/access.h"
#include "schema/schema.h"

#define DRAFT_MAX_DEPTH 3

PG_FUNCTION_INFO_V1(flusso_draft);

/* The items of one fields: list, as they are written. */
typedef struct FieldList
{
	StringInfoData text;
	int			indent;			/* of the "- " of each item */
	int			nitems;
	List	   *names;			/* field names taken */
} FieldList;

/* How a table was reached: by which foreign key, at which end of it. */
typedef struct Arrival
{
	Oid			conoid;			/* InvalidOid for the root */
	bool		referenced;		/* this table is the one the key points at */
} Arrival;

typedef struct DraftContext
{
	const char *root_nspname;	/* what a join's schema defaults to */
} DraftContext;

static void draft_fields(DraftContext *cx, StringInfo out, int indent, Oid relid,
						 int depth, Arrival arrival);

static void
add_line(FieldList *list, int extra, const char *text)
{
	appendStringInfoSpaces(&list->text, list->indent + extra);
	appendStringInfo(&list->text, "%s\n", text);
}

/* A name or label as comment text: no line break can end the comment. */
static char *
comment_text(const char *name)
{
	char	   *text = pstrdup(name);

	for (char *p = text; *p; p++)
	{
		if ((unsigned char) *p < 0x20 || *p == 0x7f)
			*p = '?';
	}
	return text;
}

static void
add_comment(FieldList *list, const char *text)
{
	add_line(list, 0, psprintf("# %s", comment_text(text)));
}

/*
 * A string as a YAML scalar: plain when it reads back as itself (YAML 1.2
 * core schema: null, true and false do not), double-quoted otherwise.
 */
static char *
yaml_string(const char *s)
{
	bool		plain = (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_';
	StringInfoData buf;

	for (const char *p = s; plain && *p; p++)
		plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			(*p >= '0' && *p <= '9') || *p == '_';
	if (plain && pg_strcasecmp(s, "null") != 0 && pg_strcasecmp(s, "true") != 0 &&
		pg_strcasecmp(s, "false") != 0)
		return pstrdup(s);
	initStringInfo(&buf);
	escape_json(&buf, s);
	return buf.data;
}

/* Take name for a field of list, or name_2, name_3, ... when it is taken. */
static char *
take_name(FieldList *list, const char *name)
{
	char	   *base = pnstrdup(name, NAMEDATALEN - 8);
	char	   *candidate = base;
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
		candidate = psprintf("%s_%d", base, n);
	}
	list->names = lappend(list->names, candidate);
	return candidate;
}

/* "publisher" of "publisher_id"; NULL when the column has no such suffix. */
static char *
strip_id(const char *column)
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
draft_column(FieldList *list, const DraftColumn *column, bool key)
{
	ScalarType	type;

	if (!schema_valid_identifier(column->name))
	{
		add_comment(list, psprintf("left out: column %s, whose name is not a flusso identifier (^[a-z_][a-z0-9_]*$)",
								   quote_identifier(column->name)));
		return;
	}
	if (!field_type(column->type, key, &type))
	{
		add_comment(list, psprintf("left out: column %s of type %s, which no field type reads (a custom field can)",
								   quote_identifier(column->name), format_type_be(column->type)));
		return;
	}
	add_line(list, 0, psprintf("- %s: %s", schema_type_name(type),
							   yaml_string(take_name(list, column->name))));
	add_line(list, 2, psprintf("required: %s", column->notnull ? "true" : "false"));
	if (type == ST_ENUM)
	{
		List	   *labels = enum_labels(type_element(column->type));
		StringInfoData buf;
		ListCell   *lc;

		initStringInfo(&buf);
		foreach(lc, labels)
			appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", yaml_string(lfirst(lc)));
		if (labels != NIL)
			add_line(list, 2, psprintf("variants: [%s]", buf.data));
	}
	list->nitems++;
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

/* "id" or "[a, b]": a primary key as the format writes it */
static char *
key_text(Oid relid, List *key)
{
	StringInfoData buf;
	ListCell   *lc;

	if (list_length(key) == 1)
		return yaml_string(get_attname(relid, linitial_int(key), false));
	initStringInfo(&buf);
	foreach(lc, key)
		appendStringInfo(&buf, "%s%s", buf.len ? ", " : "[",
						 yaml_string(get_attname(relid, lfirst_int(lc), false)));
	appendStringInfoChar(&buf, ']');
	return buf.data;
}

/* Can every name of key be written in the format? */
static bool
names_valid(Oid relid, List *key)
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
	if (!names_valid(relid, key))
		return "a column of its primary key is not a flusso identifier";
	return NULL;
}

/* The lines every join has: table, schema if not the root's, primary key. */
static void
add_join_table(DraftContext *cx, FieldList *list, Oid relid)
{
	char	   *nspname = get_namespace_name(get_rel_namespace(relid));

	add_line(list, 2, psprintf("table: %s", yaml_string(get_rel_name(relid))));
	if (strcmp(nspname, cx->root_nspname) != 0)
		add_line(list, 2, psprintf("schema: %s", yaml_string(nspname)));
	add_line(list, 2, psprintf("primary_key: %s", key_text(relid, draft_primary_key(relid))));
}

static void
draft_belongs_to(DraftContext *cx, FieldList *list, const DraftForeignKey *fk, int depth)
{
	char	   *column = get_attname(fk->from_relid, fk->from_attnum, false);
	char	   *problem = join_table_problem(fk->to_relid);
	char	   *name;

	if (problem == NULL && fk->ncolumns != 1)
		problem = psprintf("it has %d columns, and a join follows one", fk->ncolumns);
	if (problem == NULL && draft_single_key(fk->to_relid) != fk->to_attnum)
		problem = "it does not point at a single-column primary key";
	if (problem == NULL && !schema_valid_identifier(column))
		problem = "its column is not a flusso identifier";
	if (problem)
	{
		add_comment(list, psprintf("left out: foreign key %s to %s: %s",
								   fk->conname, draft_table_display(fk->to_relid), problem));
		return;
	}
	name = strip_id(column);
	name = take_name(list, name ? name : get_rel_name(fk->to_relid));
	add_comment(list, psprintf("guessed: belongs_to %s, from foreign key %s",
							   draft_table_display(fk->to_relid), fk->conname));
	add_line(list, 0, psprintf("- belongs_to: %s", yaml_string(name)));
	add_line(list, 2, psprintf("column: %s", yaml_string(column)));
	add_join_table(cx, list, fk->to_relid);
	add_line(list, 2, psprintf("required: %s",
							   draft_column_notnull(fk->from_relid, fk->from_attnum) ? "true" : "false"));
	draft_fields(cx, &list->text, list->indent + 2, fk->to_relid, depth - 1,
				 (Arrival) {fk->conoid, true});
	list->nitems++;
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
			appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", column->name);
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

	if (far == NULL || join_table_problem(far->to_relid) != NULL ||
		draft_single_key(far->to_relid) != far->to_attnum ||
		get_rel_namespace(far->to_relid) != get_rel_namespace(near->from_relid))
		return false;
	left = get_attname(near->from_relid, near->from_attnum, false);
	right = get_attname(far->from_relid, far->from_attnum, false);
	if (!schema_valid_identifier(left) || !schema_valid_identifier(right))
		return false;

	add_comment(list, psprintf("guessed: many_to_many %s through %s, from foreign keys %s and %s%s",
							   draft_table_display(far->to_relid),
							   draft_table_display(near->from_relid),
							   near->conname, far->conname,
							   junction_extra_columns(near, far)));
	add_line(list, 0, psprintf("- many_to_many: %s",
							   yaml_string(take_name(list, keys_from(incoming, near->from_relid) > 1
													 ? (strip_id(right) ? strip_id(right) : right)
													 : get_rel_name(far->to_relid)))));
	add_join_table(cx, list, far->to_relid);
	add_line(list, 2, "through:");
	add_line(list, 4, psprintf("table: %s", yaml_string(get_rel_name(near->from_relid))));
	add_line(list, 4, psprintf("left_key: %s", yaml_string(left)));
	add_line(list, 4, psprintf("right_key: %s", yaml_string(right)));
	draft_fields(cx, &list->text, list->indent + 2, far->to_relid, depth - 1,
				 (Arrival) {far->conoid, true});
	list->nitems++;
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
	char	   *name;
	bool		one;

	if (fk->ncolumns != 1 || draft_single_key(relid) != fk->to_attnum)
		problem = "it does not point at the single-column primary key of this table";
	else if (draft_many_to_many(cx, list, fk, incoming, depth))
		return;
	else if ((problem = join_table_problem(fk->from_relid)) == NULL &&
			 !schema_valid_identifier(column))
		problem = "its column is not a flusso identifier";
	if (problem)
	{
		add_comment(list, psprintf("left out: foreign key %s of %s: %s",
								   fk->conname, draft_table_display(fk->from_relid), problem));
		return;
	}
	one = draft_column_unique(fk->from_relid, fk->from_attnum);
	name = keys_from(incoming, fk->from_relid) > 1 || fk->from_relid == relid
		? psprintf("%s_by_%s", child, strip_id(column) ? strip_id(column) : column)
		: child;
	add_comment(list, psprintf("guessed: %s %s, from foreign key %s%s",
							   one ? "has_one" : "has_many", draft_table_display(fk->from_relid),
							   fk->conname, one ? psprintf(" (%s is unique)", column) : ""));
	add_line(list, 0, psprintf("- %s: %s", one ? "has_one" : "has_many",
							   yaml_string(take_name(list, name))));
	add_join_table(cx, list, fk->from_relid);
	add_line(list, 2, psprintf("foreign_key: %s", yaml_string(column)));
	draft_fields(cx, &list->text, list->indent + 2, fk->from_relid, depth - 1,
				 (Arrival) {fk->conoid, false});
	list->nitems++;
}

/*
 * "fields:" at indent, then the fields of table relid: its columns, and
 * when depth is above 0 its joins, each with its own fields one level less
 * deep.
 */
static void
draft_fields(DraftContext *cx, StringInfo out, int indent, Oid relid, int depth,
			 Arrival arrival)
{
	FieldList	list = {{0}, indent + 2, 0, NIL};
	List	   *key = draft_primary_key(relid);
	List	   *outgoing = draft_foreign_keys(relid, false);
	List	   *incoming = depth > 0 ? draft_foreign_keys(relid, true) : NIL;
	ListCell   *lc;

	initStringInfo(&list.text);
	foreach(lc, draft_columns(relid))
	{
		DraftColumn *column = lfirst(lc);

		draft_column(&list, column, is_key_column(key, outgoing, column->attnum));
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
	appendStringInfoSpaces(out, indent);
	appendStringInfoString(out, list.nitems > 0 ? "fields:\n" : "fields: []\n");
	appendBinaryStringInfo(out, list.text.data, list.text.len);
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

/* flusso_draft(root regclass, depth int) RETURNS text */
Datum
flusso_draft(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	int			depth = PG_GETARG_INT32(1);
	DraftContext cx;
	StringInfoData out;
	List	   *key;

	flusso_require_admin();
	if (depth < 0 || depth > DRAFT_MAX_DEPTH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("depth must be between 0 and %d, not %d", DRAFT_MAX_DEPTH, depth),
				 errhint("depth is how many levels of foreign keys the draft follows; 0 drafts the table's own columns.")));
	check_root(relid);
	cx.root_nspname = get_namespace_name(get_rel_namespace(relid));
	key = draft_primary_key(relid);

	initStringInfo(&out);
	appendStringInfo(&out,
					 "# A draft of an index on %s, read from the catalog by flusso_draft,\n"
					 "# %s.  Guessed: the field type of each column\n"
					 "# (text as text; keys, character(n) as keyword; enum types as enum),\n"
					 "# required from NOT NULL%s.\n"
					 "version: 1\nschema: %s\ntable: %s\n",
					 comment_text(draft_table_display(relid)),
					 depth == 0 ? "following no foreign key"
					 : psprintf("following foreign keys %d level%s deep", depth, depth == 1 ? "" : "s"),
					 depth == 0 ? "" : ", and a join per foreign key, marked below",
					 yaml_string(cx.root_nspname), yaml_string(get_rel_name(relid)));
	if (key == NIL)
		appendStringInfoString(&out, "# no primary key: declare primary_key (NOT NULL columns a unique index covers)\n");
	else if (!names_valid(relid, key))
		appendStringInfoString(&out, "# the primary key has a column that is not a flusso identifier: declare another primary_key\n");
	else
		appendStringInfo(&out, "primary_key: %s\n", key_text(relid, key));
	draft_fields(&cx, &out, 0, relid, depth, (Arrival) {InvalidOid, false});
	PG_RETURN_TEXT_P(cstring_to_text(out.data));
}

/*-------------------------------------------------------------------------
 *
 * draft.c
 *	  flusso_draft(root, depth): a starting definition for an index on a
 *	  table, read from the system catalogs alone, as YAML with comments that say
 *	  what was guessed (its fields and joins are
 *	  design/draft_walk.c's).
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
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "design/draft_tables.h"
#include "design/draft_walk.h"
#include "design/yaml_writer.h"
#include "schema/names.h"
#include "schema/schema.h"
#include "util/access.h"

#define DRAFT_MAX_DEPTH 3

PG_FUNCTION_INFO_V1(flusso_draft);

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

/*-------------------------------------------------------------------------
 *
 * resolve.c
 *	  Compiles an index schema into resolution rules: for every role a
 *	  table plays (the root, a child pointing at its parent, a belongs_to
 *	  target, a junction, the far side of a junction), which columns of a
 *	  change to read and which set-based statements lead from those values
 *	  up to root keys.
 *
 * A child's foreign key (old and new) names its parent directly, so
 * deleting a child or moving it to another parent rebuilds both parents.
 * A belongs_to target is found through every referrer, also after it was
 * deleted; a junction row through its left key; a far-side row through the
 * junction.  Above the first level, parents are found in the current rows.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "document/build.h"
#include "document/lookup.h"
#include "document/resolve.h"

/* A level of the join tree: its table and how its keys lead up. */
typedef struct Level
{
	Oid			relid;
	char	   *nspname;
	char	   *relname;
	char	   *qualified;
	char	   *from;			/* what its rows are read from (doc_rows_of) */
	char	   *key;			/* single key column (non-root levels) */
	ResolveStep *up;			/* from this level's keys to the root's */
} Level;

static void compile_fields(IndexResolver *resolver, const SchemaFieldList *fields,
						   const Level *level);

static Level *
level_for(const char *nspname, const char *relname, const char *key, ResolveStep *up)
{
	Level	   *level = palloc0(sizeof(Level));

	level->relid = doc_table(nspname, relname);
	level->nspname = pstrdup(nspname);
	level->relname = pstrdup(relname);
	level->qualified = quote_qualified_identifier(nspname, relname);
	level->from = doc_rows_of(level->relid, level->qualified);
	level->key = key ? pstrdup(key) : NULL;
	level->up = up;
	return level;
}

static char *
type_of(const Level *level, const char *column)
{
	return doc_type_name(get_atttype(level->relid, doc_column(level->relid, column)));
}

/* SELECT DISTINCT <out>::text FROM <table> WHERE <in> = ANY($1) */
static ResolveStep *
step(const Level *level, const char *out, const char *in, ResolveStep *next)
{
	ResolveStep *s = palloc0(sizeof(ResolveStep));

	s->sql = psprintf("SELECT DISTINCT %s::pg_catalog.text FROM %s WHERE %s OPERATOR(pg_catalog.=) ANY($1::pg_catalog.text[]::%s[]) AND %s IS NOT NULL",
					  quote_identifier(out), level->from, quote_identifier(in),
					  type_of(level, in), quote_identifier(out));
	s->relid = level->relid;
	s->column = pstrdup(in);
	s->next = next;
	return s;
}

static void
add_rule(IndexResolver *resolver, const Level *level, List *columns, ResolveStep *steps)
{
	ResolveRule *rule = palloc0(sizeof(ResolveRule));

	rule->relid = level->relid;
	rule->nspname = level->nspname;
	rule->relname = level->relname;
	rule->columns = columns;
	rule->steps = steps;
	resolver->rules = lappend(resolver->rules, rule);
}

/* The single primary key column of a table, from the system catalogs. */
static char *
single_primary_key(const Level *level)
{
	ColumnList	key = doc_primary_key(level->relid, level->qualified);

	if (key.ncolumns != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("table %s needs a single-column primary key", level->qualified)));
	return key.columns[0];
}

/*
 * A join or aggregate under `parent`: the rules for its own rows and, for
 * joins, for the levels below it.
 */
static void
compile_related(IndexResolver *resolver, const SchemaField *field, const Level *parent)
{
	const char *key = field->kind == FIELD_JOIN && field->primary_key.ncolumns == 1
		? field->primary_key.columns[0] : NULL;
	Level	   *related;

	if (field->kind == FIELD_JOIN && field->join == JOIN_BELONGS_TO)
	{
		/* the target's key -> every referrer in the parent's table */
		related = level_for(field->namespace, field->table, key, NULL);
		related->up = step(parent, parent->key, field->column, parent->up);
		add_rule(resolver, related, list_make1(pstrdup(key)), related->up);
	}
	else if (field->through)
	{
		Level	   *junction = level_for(field->namespace, field->through->table, NULL, NULL);

		if (key == NULL)
		{
			related = level_for(field->namespace, field->table, NULL, NULL);
			key = single_primary_key(related);
		}
		related = level_for(field->namespace, field->table, key, NULL);
		/* a junction row names its parent by its left key, old and new */
		add_rule(resolver, junction, list_make1(pstrdup(field->through->left_key)), parent->up);
		/* a far-side row -> its parents through the junction */
		related->up = step(junction, field->through->left_key, field->through->right_key,
						   parent->up);
		add_rule(resolver, related, list_make1(pstrdup(key)), related->up);
	}
	else
	{
		/* a child names its parent by its foreign key, old and new */
		related = level_for(field->namespace, field->table, key, NULL);
		add_rule(resolver, related, list_make1(pstrdup(field->foreign_key)), parent->up);
		if (key)
			related->up = step(related, field->foreign_key, key, parent->up);
	}

	if (field->kind == FIELD_JOIN && related->key)
		compile_fields(resolver, &field->children, related);
}

static void
compile_fields(IndexResolver *resolver, const SchemaFieldList *fields, const Level *level)
{
	for (int i = 0; i < fields->nfields; i++)
	{
		const SchemaField *field = fields->fields[i];

		if (field->kind == FIELD_OBJECT)
			compile_fields(resolver, &field->children, level);
		else if (field->kind == FIELD_JOIN || field->kind == FIELD_AGGREGATE)
			compile_related(resolver, field, level);
	}
}

IndexResolver *
doc_compile_resolver(const IndexSchema *schema)
{
	IndexResolver *resolver = palloc0(sizeof(IndexResolver));
	Level	   *root = level_for(schema->namespace, schema->table, NULL, NULL);
	List	   *key_columns = NIL;

	if (schema->primary_key.ncolumns > 0)
	{
		for (int i = 0; i < schema->primary_key.ncolumns; i++)
			key_columns = lappend(key_columns, pstrdup(schema->primary_key.columns[i]));
	}
	else
		key_columns = list_make1(single_primary_key(root));
	resolver->nkeys = list_length(key_columns);
	if (resolver->nkeys == 1)
		root->key = linitial(key_columns);

	add_rule(resolver, root, key_columns, NULL);
	((ResolveRule *) llast(resolver->rules))->root = true;
	if (resolver->nkeys == 1)
	{
		resolver->all_keys_sql = psprintf("SELECT %s::pg_catalog.text FROM %s",
										  quote_identifier(root->key), root->from);
		compile_fields(resolver, &schema->fields, root);
	}
	return resolver;
}

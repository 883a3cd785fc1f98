/*-------------------------------------------------------------------------
 *
 * tables.c
 *	  Walks an index schema against the system catalogs: every schema, table
 *	  and column it names must exist, every declared type must read the
 *	  column's real type, and filter values must be valid for their column;
 *	  none may be flusso's own (schemas flusso and flusso_docs).
 *	  Collects, per table, the columns whose values change records must
 *	  carry, and the columns builds find its rows by (table_use.c);
 *	  check/ judges those (identity.c, check.c, lookups.c), and ready.c
 *	  holds the worker to the errors the walk finds.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "util/attempt.h"
#include "binding/keys.h"
#include "binding/tables.h"
#include "binding/types.h"
#include "compat.h"
#include "document/lookup.h"
#include "settings.h"
#include "schema/names.h"

typedef struct WalkContext
{
	DiagnosticSink *sink;
	List	   *tables;			/* TableUse, one per relation */
	bool		raw_sql;		/* a raw filter reads what it will */
} WalkContext;

/* What a column reference resolved to. */
typedef struct ResolvedColumn
{
	bool		found;
	Oid			type;
	bool		notnull;
} ResolvedColumn;

static void walk_fields(WalkContext *cx, TableUse *table, const SchemaFieldList *fields);

static void
add_unique(List **list, const char *name)
{
	ListCell   *lc;

	foreach(lc, *list)
	{
		if (strcmp(lfirst(lc), name) == 0)
			return;
	}
	*list = lappend(*list, pstrdup(name));
}

/* Add the names of more to *list, each once. */
void
table_use_add_names(List **list, List *more)
{
	ListCell   *lc;

	foreach(lc, more)
		add_unique(list, lfirst(lc));
}

/* Find a table; on failure report why and return NULL. */
static TableUse *
resolve_table(WalkContext *cx, const char *nspname, const char *relname,
			  const char *path)
{
	char	   *missing;
	Oid			relid = doc_find_table(nspname, relname, &missing);
	char		relkind;

	if (!OidIsValid(relid))
	{
		diag_add(cx->sink, SEVERITY_ERROR, path,
				 OidIsValid(get_namespace_oid(nspname, true))
				 ? "Create the table, or correct the table name in the definition."
				 : "Create the schema, or correct the definition's schema.",
				 "%s", missing);
		return NULL;
	}
	relkind = get_rel_relkind(relid);
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
	{
		diag_add(cx->sink, SEVERITY_ERROR, path,
				 "flusso reads tables: only their changes can be streamed.",
				 "\"%s.%s\" is not a table", nspname, relname);
		return NULL;
	}
	/* published and streamed by whoever provisions, whoever owns them */
	if (strcmp(nspname, FLUSSO_SCHEMA) == 0 || strcmp(nspname, FLUSSO_DOCS_SCHEMA) == 0)
	{
		diag_add(cx->sink, SEVERITY_ERROR, path,
				 "Name a table of your own.",
				 "\"%s.%s\" is flusso's own: its tables and documents are no index's source",
				 nspname, relname);
		return NULL;
	}
	return table_use_merge(&cx->tables, relid, path);
}

/* Suggest the table's column closest to a misspelt name. */
static char *
column_hint(Oid relid, const char *name)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	const char **names = palloc0(sizeof(char *) * (desc->natts + 1));
	int			n = 0;
	const char *suggestion;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, i);

		if (!attr->attisdropped)
			names[n++] = pstrdup(NameStr(attr->attname));
	}
	table_close(rel, AccessShareLock);
	suggestion = schema_suggest(name, names);
	return suggestion ? psprintf("Did you mean \"%s\"?", suggestion)
		: pstrdup("Add the column, or correct the definition.");
}

/* Look up a column the definition reads; report it when missing. */
static ResolvedColumn
resolve_column(WalkContext *cx, TableUse *table, const char *column, const char *path)
{
	ResolvedColumn	ref = {false, InvalidOid, false};
	AttrNumber	attnum;
	HeapTuple	tuple;
	char	   *missing;

	if (table == NULL || column == NULL)
		return ref;
	missing = doc_missing_column(table->relid, column);
	if (missing)
	{
		diag_add(cx->sink, SEVERITY_ERROR, path, column_hint(table->relid, column), "%s", missing);
		return ref;
	}
	attnum = get_attnum(table->relid, column);
	tuple = SearchSysCache2(ATTNUM, ObjectIdGetDatum(table->relid), Int16GetDatum(attnum));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for attribute %d of relation %u",
			 attnum, table->relid);
	ref.found = true;
	ref.type = ((Form_pg_attribute) GETSTRUCT(tuple))->atttypid;
	ref.notnull = ((Form_pg_attribute) GETSTRUCT(tuple))->attnotnull;
	ReleaseSysCache(tuple);
	add_unique(&table->columns, column);
	return ref;
}

static void
report_type_mismatch(WalkContext *cx, TableUse *table, const char *column,
					 Oid column_type, const char *declared, const char *path)
{
	char	   *readers = type_readers(column_type);

	diag_add(cx->sink, SEVERITY_ERROR, path,
			 readers ? psprintf("Columns of type %s are read by: %s.",
								format_type_be(column_type), readers)
			 : psprintf("No scalar type reads %s; a custom field can.",
						format_type_be(column_type)),
			 "column \"%s\" of table \"%s\" is of type %s, which a field of type %s cannot read",
			 column, table->display, format_type_be(column_type), declared);
}

/* A column read with a declared scalar type. */
static void
check_typed_column(WalkContext *cx, TableUse *table, const char *column,
				   ScalarType type, bool required, bool has_default, const char *path)
{
	ResolvedColumn	ref = resolve_column(cx, table, column, path);

	if (!ref.found)
		return;
	if (!type_accepts(type, ref.type))
		report_type_mismatch(cx, table, column, ref.type, schema_type_name(type), path);
	else if (required && !ref.notnull && !has_default)
		diag_add(cx->sink, SEVERITY_WARNING, path,
				 "Set required: false, give the field a default, or add NOT NULL to the column.",
				 "the field is required but column \"%s\" of table \"%s\" is nullable",
				 column, table->display);
}

/* The catalog name of a type ("int4"), beside its SQL name ("integer"). */
static char *
type_catalog_name(Oid type)
{
	HeapTuple	tuple = SearchSysCache1(TYPEOID, ObjectIdGetDatum(type));
	char	   *name;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for type %u", type);
	name = pstrdup(NameStr(((Form_pg_type) GETSTRUCT(tuple))->typname));
	ReleaseSysCache(tuple);
	return name;
}

/*
 * A custom field lists the PostgreSQL types it reads, by name: either
 * spelling is accepted, with or without a type modifier.
 */
static void
check_custom_column(WalkContext *cx, TableUse *table, const SchemaField *field)
{
	ResolvedColumn	ref = resolve_column(cx, table, field->column, field->path);
	Oid			element;
	char	   *sql_name;
	char	   *catalog_name;

	if (!ref.found)
		return;
	element = type_element(ref.type);
	sql_name = format_type_be(element);
	catalog_name = type_catalog_name(element);
	for (int i = 0; i < field->ncustom_types; i++)
	{
		char	   *wanted = pstrdup(field->custom_types[i]);
		char	   *paren = strchr(wanted, '(');

		if (paren)
			*paren = '\0';
		wanted = pstrdup(wanted);
		while (*wanted == ' ')
			wanted++;
		for (char *end = wanted + strlen(wanted); end > wanted && end[-1] == ' ';)
			*--end = '\0';
		if (pg_strcasecmp(wanted, sql_name) == 0 || pg_strcasecmp(wanted, catalog_name) == 0)
			return;
	}
	diag_add(cx->sink, SEVERITY_ERROR, field->path,
			 psprintf("Add \"%s\" to the field's postgres list, or read another column.", sql_name),
			 "column \"%s\" of table \"%s\" is of type %s, which the custom field does not list",
			 field->column, table->display, sql_name);
}

static void
check_geo(WalkContext *cx, TableUse *table, const SchemaField *field)
{
	if (field->lat)
	{
		const char *coords[2] = {field->lat, field->lon};

		for (int i = 0; i < 2; i++)
		{
			ResolvedColumn	ref = resolve_column(cx, table, coords[i], field->path);

			if (ref.found && !type_is_numeric(getBaseType(ref.type)))
				report_type_mismatch(cx, table, coords[i], ref.type,
									 "geo (lat/lon)", field->path);
		}
	}
	else
	{
		ResolvedColumn	ref = resolve_column(cx, table, field->column, field->path);
		Oid			base = ref.found ? getBaseType(ref.type) : InvalidOid;

		if (ref.found && !type_is_json(base) && !type_is_text(base))
			report_type_mismatch(cx, table, field->column, ref.type, "geo", field->path);
	}
}

typedef struct ValueInput
{
	const char *value;
	Oid			type;
} ValueInput;

static void
read_value(void *arg)
{
	ValueInput *input = arg;
	Oid			function;
	Oid			ioparam;

	getTypeInputInfo(input->type, &function, &ioparam);
	(void) OidInputFunctionCall(function, (char *) input->value, ioparam, -1);
}

/*
 * Would value be accepted by the column type's input function?  Filter
 * values are bound as text and cast, so a bad one would fail every build.
 */
static bool
value_parses(const char *value, Oid type, char **problem)
{
	ValueInput	input = {value, type};

	return attempt(read_value, &input, problem);
}

/* filters at list_path, e.g. "fields[2] (has_many x).filters" */
static void
check_filters(WalkContext *cx, TableUse *table, const SchemaFilterList *filters,
			  const char *list_path)
{
	for (int i = 0; i < filters->nfilters; i++)
	{
		const SchemaFilter *filter = &filters->filters[i];
		char	   *item_path = psprintf("%s[%d]", list_path, i);
		ResolvedColumn	ref;

		if (filter->op == FILTER_RAW)
		{
			cx->raw_sql = true;
			continue;
		}
		ref = resolve_column(cx, table, filter->column, item_path);
		if (!ref.found || filter->op == FILTER_LIKE || filter->op == FILTER_ILIKE)
			continue;
		for (int v = 0; v < filter->nvalues; v++)
		{
			char	   *problem;

			if (!value_parses(filter->values[v], type_element(ref.type), &problem))
			{
				diag_add(cx->sink, SEVERITY_ERROR, item_path,
						 "Filter values are compared as the column's type.",
						 "value \"%s\" is not valid for column \"%s\" of table \"%s\": %s",
						 filter->values[v], filter->column, table->display, problem);
				break;
			}
		}
	}
}

/*
 * What a join or an aggregate reads of its table besides its fields: the
 * foreign key its rows are found by (looked up by it, unless through a
 * junction), kept in a row's old image, and its filters.
 */
static void
walk_join_key(WalkContext *cx, TableUse *related, const SchemaField *field)
{
	if (field->foreign_key &&
		resolve_column(cx, related, field->foreign_key, field->path).found)
	{
		add_unique(&related->old_key_columns, field->foreign_key);
		if (!field->through)
			table_use_add_lookup(related, field->foreign_key, NULL);
	}
	check_filters(cx, related, &field->filters, psprintf("%s.filters", field->path));
}

/* The junction table of a many_to_many join or aggregate. */
static TableUse *
walk_through(WalkContext *cx, const SchemaField *field)
{
	char	   *path = psprintf("%s.through", field->path);
	TableUse   *junction = resolve_table(cx, field->namespace, field->through->table, path);

	if (junction == NULL)
		return NULL;
	if (resolve_column(cx, junction, field->through->left_key, path).found)
		table_use_add_lookup(junction, field->through->left_key, NULL);
	resolve_column(cx, junction, field->through->right_key, path);
	add_unique(&junction->old_key_columns, field->through->left_key);
	return junction;
}

static void
walk_join(WalkContext *cx, TableUse *table, const SchemaField *field)
{
	TableUse   *related = resolve_table(cx, field->namespace, field->table, field->path);

	if (field->join == JOIN_BELONGS_TO)
		resolve_column(cx, table, field->column, field->path);
	if (field->join == JOIN_MANY_TO_MANY)
		walk_through(cx, field);
	if (related == NULL)
		return;

	for (int i = 0; i < field->primary_key.ncolumns; i++)
	{
		if (!resolve_column(cx, related, field->primary_key.columns[i], field->path).found)
			continue;
		add_unique(&related->key_columns, field->primary_key.columns[i]);
		/* a belongs_to target and a junction's far side are read by their key */
		if ((field->join == JOIN_BELONGS_TO || field->through) &&
			field->primary_key.ncolumns == 1)
			table_use_add_lookup(related, field->primary_key.columns[i], NULL);
	}
	walk_join_key(cx, related, field);
	for (int i = 0; i < field->norder_by; i++)
		resolve_column(cx, related, field->order_by[i].column,
					   psprintf("%s.order_by[%d]", field->path, i));
	walk_fields(cx, related, &field->children);
}

/* The primary key an ids aggregate collects: the related table's own. */
static void
check_ids_key(WalkContext *cx, TableUse *related, const SchemaField *field)
{
	Relation	rel = table_open(related->relid, AccessShareLock);
	Oid			pkey = compat_primary_key_index(rel);
	HeapTuple	tuple;

	table_close(rel, AccessShareLock);
	if (!OidIsValid(pkey))
	{
		diag_add(cx->sink, SEVERITY_ERROR, field->path,
				 "Add a primary key to the table.",
				 "table \"%s\" has no primary key for ids to collect", related->display);
		return;
	}
	tuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(pkey));
	if (HeapTupleIsValid(tuple))
	{
		Form_pg_index index = (Form_pg_index) GETSTRUCT(tuple);

		if (index->indnkeyatts != 1)
			diag_add(cx->sink, SEVERITY_ERROR, field->path, NULL,
					 "ids needs a single-column primary key, and table \"%s\" has %d columns in its key",
					 related->display, index->indnkeyatts);
		else
		{
			Oid			type = get_atttype(related->relid, index->indkey.values[0]);

			if (!(field->element_type == ST_LONG && type_is_integer(getBaseType(type))) &&
				!type_accepts(field->element_type, type))
				report_type_mismatch(cx, related,
									 get_attname(related->relid, index->indkey.values[0], false),
									 type, schema_type_name(field->element_type), field->path);
		}
		ReleaseSysCache(tuple);
	}
}

static void
walk_aggregate(WalkContext *cx, const SchemaField *field)
{
	TableUse   *related = resolve_table(cx, field->namespace, field->table, field->path);
	TableUse   *junction = field->through ? walk_through(cx, field) : NULL;

	if (related == NULL)
		return;
	walk_join_key(cx, related, field);

	switch (field->aggregate)
	{
		case AGG_COUNT:
			break;
		case AGG_AVG:
			{
				ResolvedColumn	ref = resolve_column(cx, related, field->column, field->path);

				if (ref.found && !type_is_numeric(type_element(ref.type)))
					report_type_mismatch(cx, related, field->column, ref.type, "avg", field->path);
			}
			break;
		case AGG_SUM:
		case AGG_MIN:
		case AGG_MAX:
			check_typed_column(cx, related, field->column, field->value_type,
							   false, false, field->path);
			break;
		case AGG_IDS:
			if (junction)
			{
				ResolvedColumn	ref = resolve_column(cx, junction, field->through->right_key,
												 field->path);

				if (ref.found &&
					!(field->element_type == ST_LONG && type_is_integer(getBaseType(ref.type))) &&
					!type_accepts(field->element_type, ref.type))
					report_type_mismatch(cx, junction, field->through->right_key, ref.type,
										 schema_type_name(field->element_type), field->path);
			}
			else
				check_ids_key(cx, related, field);
			break;
	}
}

static void
walk_fields(WalkContext *cx, TableUse *table, const SchemaFieldList *fields)
{
	for (int i = 0; i < fields->nfields; i++)
	{
		const SchemaField *field = fields->fields[i];

		switch (field->kind)
		{
			case FIELD_SCALAR:
				check_typed_column(cx, table, field->column, field->type,
								   field->required, field->default_value != NULL,
								   field->path);
				break;
			case FIELD_CUSTOM:
				check_custom_column(cx, table, field);
				break;
			case FIELD_GEO:
				check_geo(cx, table, field);
				break;
			case FIELD_MAP:
				check_typed_column(cx, table, field->column, ST_JSON,
								   field->required, false, field->path);
				break;
			case FIELD_OBJECT:
				walk_fields(cx, table, &field->children);
				break;
			case FIELD_JOIN:
				walk_join(cx, table, field);
				break;
			case FIELD_AGGREGATE:
				walk_aggregate(cx, field);
				break;
			case FIELD_CONSTANT:
				break;
		}
	}
}

/* The root table's key: as declared, or its primary key. */
static void
check_root_key(WalkContext *cx, TableUse *root, const IndexSchema *schema)
{
	Relation	rel;
	Bitmapset  *pkey;
	int			i = -1;

	if (schema->primary_key.ncolumns > 0)
	{
		char	   *problem;

		for (int c = 0; c < schema->primary_key.ncolumns; c++)
		{
			if (!resolve_column(cx, root, schema->primary_key.columns[c], "primary_key").found)
				return;
			add_unique(&root->key_columns, schema->primary_key.columns[c]);
		}
		problem = key_uniqueness_problem(root->relid, root->display, root->key_columns);
		if (problem)
			diag_add(cx->sink, SEVERITY_ERROR, "primary_key",
					 "Declare NOT NULL columns that a unique index covers, such as the table's PRIMARY KEY.",
					 "%s, so it cannot name documents", problem);
		return;
	}
	rel = table_open(root->relid, AccessShareLock);
	pkey = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_PRIMARY_KEY);
	table_close(rel, AccessShareLock);
	if (pkey == NULL)
	{
		diag_add(cx->sink, SEVERITY_ERROR, "table",
				 "Declare primary_key: in the definition, or add a PRIMARY KEY to the table.",
				 "table \"%s\" has no primary key, and the definition declares none: documents need an id",
				 root->display);
		return;
	}
	while ((i = bms_next_member(pkey, i)) >= 0)
		add_unique(&root->key_columns,
				   get_attname(root->relid, i + FirstLowInvalidHeapAttributeNumber, false));
}

/*
 * Check every name and type the schema uses against the catalog, adding
 * findings to sink; return the tables it reads (TableUse), root first.
 */
List *
bind_index_tables(const IndexSchema *schema, DiagnosticSink *sink)
{
	WalkContext cx = {sink, NIL, false};
	TableUse   *root = resolve_table(&cx, schema->namespace, schema->table, "table");

	if (root != NULL)
	{
		check_root_key(&cx, root, schema);
		check_filters(&cx, root, &schema->filters, "filters");
		if (schema->soft_delete)
		{
			if (schema->soft_delete->column)
				resolve_column(&cx, root, schema->soft_delete->column, "soft_delete.column");
			check_filters(&cx, root, &schema->soft_delete->when, "soft_delete.when");
		}
	}
	walk_fields(&cx, root, &schema->fields);
	/* SQL text may name any column, of any table the build reads */
	if (cx.raw_sql)
	{
		ListCell   *lc;

		foreach(lc, cx.tables)
			((TableUse *) lfirst(lc))->columns_unknown = true;
	}
	return cx.tables;
}

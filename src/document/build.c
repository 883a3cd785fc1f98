/*-------------------------------------------------------------------------
 *
 * build.c
 *	  Generates the statement that builds an index's documents: one
 *	  jsonb_build_object per object, correlated subqueries for joins and
 *	  aggregates, the root filters and soft_delete in the WHERE clause, so
 *	  that a key whose row is gone, filtered out or soft-deleted builds
 *	  nothing and becomes a delete.
 *
 * Every identifier is quoted and every name schema-qualified; every value
 * of the definition (filter values, defaults, constants) is a parameter,
 * cast to the column's own type.  Joins without an order are ordered by
 * the related table's primary key, and ties in order_by are broken by it,
 * so a document is the same every time it is built.  Values become JSON of
 * their type through jsonb_build_object, except bytea (base64) and money
 * (a number).  An object wider than jsonb_build_object's argument limit is
 * built in pieces joined with ||.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "document/build.h"
#include "document/docid.h"
#include "document/lookup.h"
#include "document/raw_filter.h"

/* jsonb_build_object takes at most 100 arguments: 50 key/value pairs */
#define PAIRS_PER_CALL 50

typedef struct BuildContext
{
	List	   *param_types;	/* Oid */
	List	   *param_values;	/* Datum */
	int			aliases;
} BuildContext;

/* A table the statement reads, as it is in the catalog now. */
typedef struct Table
{
	Oid			relid;
	char	   *qualified;		/* quoted schema.table */
	char	   *alias;
} Table;

static char *object_expr(BuildContext *cx, const SchemaFieldList *fields,
						 const Table *table, const ColumnList *table_key);

static char *
add_param(BuildContext *cx, Oid type, Datum value)
{
	cx->param_types = lappend_oid(cx->param_types, type);
	cx->param_values = lappend(cx->param_values, (void *) value);
	return psprintf("$%d", list_length(cx->param_types));
}

static Table *
open_table(BuildContext *cx, const char *nspname, const char *relname)
{
	Table	   *table = palloc0(sizeof(Table));

	table->relid = doc_table(nspname, relname);
	table->qualified = quote_qualified_identifier(nspname, relname);
	table->alias = psprintf("t%d", cx->aliases++);
	return table;
}

static Oid
column_type(const Table *table, const char *column)
{
	return get_atttype(table->relid, doc_column(table->relid, column));
}

/* The column's type as SQL, with its modifier: char(2), numeric(8,2). */
static char *
column_type_sql(const Table *table, const char *column)
{
	AttrNumber	attnum = get_attnum(table->relid, column);
	Oid			type;
	int32		typmod;
	Oid			collation;

	(void) column_type(table, column);
	get_atttypetypmodcoll(table->relid, attnum, &type, &typmod, &collation);
	return format_type_extended(type, typmod,
								FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY);
}

static char *
column_ref(const Table *table, const char *column)
{
	return psprintf("%s.%s", table->alias, quote_identifier(column));
}

/* A definition value as a parameter cast to the column's type. */
static char *
typed_param(BuildContext *cx, const Table *table, const char *column, const char *value)
{
	return psprintf("%s::%s", add_param(cx, TEXTOID, CStringGetTextDatum(value)),
					column_type_sql(table, column));
}

/*
 * A type's name for casting text to it, schema-qualified and without a
 * modifier: format_type_be_qualified() names bpchar "character", which as
 * a cast means character(1) and would cut keys and values to one letter.
 */
char *
doc_type_name(Oid type)
{
	return format_type_extended(type, -1, FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY);
}

/*
 * The primary key columns of relid (qualified names it in errors), from the
 * catalog; an error when it has none.
 */
ColumnList
doc_primary_key(Oid relid, const char *qualified)
{
	Relation	rel = table_open(relid, AccessShareLock);
	Bitmapset  *keys = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_PRIMARY_KEY);
	ColumnList	list = {0, NULL};
	int			i = -1;

	table_close(rel, AccessShareLock);
	list.columns = palloc(sizeof(char *) * Max(bms_num_members(keys), 1));
	while ((i = bms_next_member(keys, i)) >= 0)
		list.columns[list.ncolumns++] =
			get_attname(relid, i + FirstLowInvalidHeapAttributeNumber, false);
	if (list.ncolumns == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("table %s has no primary key", qualified),
				 errhint("Declare primary_key in the definition, or add a PRIMARY KEY.")));
	return list;
}

/* The single column a foreign key or junction points at. */
static const char *
single_key(const ColumnList *key, const Table *table)
{
	if (key->ncolumns != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("table %s has a composite key, which a foreign key cannot point at",
						table->qualified)));
	return key->columns[0];
}

static void
append_filters(BuildContext *cx, StringInfo where, const SchemaFilterList *filters,
			   const Table *table)
{
	static const char *const comparison[] = {
		[FILTER_EQ] = "OPERATOR(pg_catalog.=)",
		[FILTER_NEQ] = "OPERATOR(pg_catalog.<>)",
		[FILTER_LT] = "OPERATOR(pg_catalog.<)",
		[FILTER_LTE] = "OPERATOR(pg_catalog.<=)",
		[FILTER_GT] = "OPERATOR(pg_catalog.>)",
		[FILTER_GTE] = "OPERATOR(pg_catalog.>=)",
	};

	for (int i = 0; i < filters->nfilters; i++)
	{
		const SchemaFilter *f = &filters->filters[i];
		char	   *col = f->op == FILTER_RAW ? NULL : column_ref(table, f->column);

		appendStringInfoString(where, " AND ");
		switch (f->op)
		{
			case FILTER_RAW:
				doc_check_raw_filter(f->raw, NULL);
				/* a line break ends a trailing -- comment inside */
				appendStringInfo(where, "(%s\n)", f->raw);
				break;
			case FILTER_IS_NULL:
				appendStringInfo(where, "%s IS NULL", col);
				break;
			case FILTER_IS_NOT_NULL:
				appendStringInfo(where, "%s IS NOT NULL", col);
				break;
			case FILTER_LIKE:
			case FILTER_ILIKE:
				appendStringInfo(where, "%s::pg_catalog.text %s %s", col,
								 f->op == FILTER_LIKE ? "OPERATOR(pg_catalog.~~)"
								 : "OPERATOR(pg_catalog.~~*)",
								 add_param(cx, TEXTOID, CStringGetTextDatum(f->values[0])));
				break;
			case FILTER_IN:
			case FILTER_NOT_IN:
				{
					Datum	   *elems = palloc(sizeof(Datum) * Max(f->nvalues, 1));

					for (int v = 0; v < f->nvalues; v++)
						elems[v] = CStringGetTextDatum(f->values[v]);
					appendStringInfo(where, "%s%s OPERATOR(pg_catalog.=) ANY(%s::pg_catalog.text[]::%s[])",
									 f->op == FILTER_NOT_IN ? "NOT " : "", col,
									 add_param(cx, TEXTARRAYOID,
											   PointerGetDatum(construct_array(elems, f->nvalues, TEXTOID,
																			   -1, false, TYPALIGN_INT))),
									 doc_type_name(column_type(table, f->column)));
				}
				break;
			case FILTER_BETWEEN:
				appendStringInfo(where, "%s OPERATOR(pg_catalog.>=) %s AND %s OPERATOR(pg_catalog.<=) %s",
								 col, typed_param(cx, table, f->column, f->values[0]),
								 col, typed_param(cx, table, f->column, f->values[1]));
				break;
			default:
				appendStringInfo(where, "%s %s %s", col, comparison[f->op],
								 typed_param(cx, table, f->column, f->values[0]));
				break;
		}
	}
}

/*
 * JSON has no NaN and no infinity, and their text ("NaN", "infinity") is a
 * string where the mapping expects a number or a date: a float or numeric
 * NaN or infinity, and an infinite date or timestamp, become null, in
 * arrays too (array_replace keeps their shape).
 */
static char *
finite_expr(const char *expr, Oid type)
{
	static const char *const number_specials[] = {"NaN", "Infinity", "-Infinity"};
	static const char *const time_specials[] = {"infinity", "-infinity"};
	Oid			element = get_element_type(type);
	Oid			scalar = OidIsValid(element) ? element : type;
	const char *const *specials;
	int			nspecials;
	char	   *out = pstrdup(expr);

	switch (getBaseType(scalar))
	{
		case FLOAT4OID:
		case FLOAT8OID:
		case NUMERICOID:
			specials = number_specials;
			nspecials = lengthof(number_specials);
			break;
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			specials = time_specials;
			nspecials = lengthof(time_specials);
			break;
		default:
			return out;
	}
	for (int i = 0; i < nspecials; i++)
		out = psprintf(OidIsValid(element) ? "pg_catalog.array_replace(%s, '%s'::%s, NULL)"
					   : "NULLIF(%s, '%s'::%s)",
					   out, specials[i], doc_type_name(scalar));
	return out;
}

/* A column's value as it goes into the document. */
static char *
scalar_expr(BuildContext *cx, const SchemaField *field, const Table *table)
{
	char	   *expr = column_ref(table, field->column);
	Oid			type = column_type(table, field->column);

	for (int i = 0; i < field->ntransforms; i++)
		expr = psprintf(field->transforms[i] == TRANSFORM_LOWERCASE
						? "pg_catalog.lower(%s)" : "pg_catalog.btrim(%s)", expr);
	expr = finite_expr(expr, type);
	if (field->default_value)
		expr = psprintf("COALESCE(%s, %s)", expr,
						typed_param(cx, table, field->column, field->default_value->str));
	if (type == BYTEAOID)
		expr = psprintf("pg_catalog.translate(pg_catalog.encode(%s, 'base64'), E'\\n', '')", expr);
	else if (type == CASHOID)
		expr = psprintf("%s::pg_catalog.numeric", expr);
	return expr;
}

/* ORDER BY of a to-many join or has_one: declared order, then the key. */
static char *
order_clause(const SchemaField *field, const Table *related, const ColumnList *key)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < field->norder_by; i++)
		appendStringInfo(&buf, "%s%s %s", buf.len ? ", " : "",
						 column_ref(related, field->order_by[i].column),
						 field->order_by[i].descending ? "DESC" : "ASC");
	for (int i = 0; i < key->ncolumns; i++)
		appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", column_ref(related, key->columns[i]));
	return buf.data;
}

/*
 * FROM and WHERE that pick the related rows of a join or an aggregate for
 * the current parent row.
 */
static char *
related_rows(BuildContext *cx, const SchemaField *field, const Table *parent,
			 const ColumnList *parent_key, const Table *related,
			 const ColumnList *related_key)
{
	StringInfoData buf;

	initStringInfo(&buf);
	if (field->kind == FIELD_JOIN && field->join == JOIN_BELONGS_TO)
		appendStringInfo(&buf, "FROM %s %s WHERE %s OPERATOR(pg_catalog.=) %s",
						 related->qualified, related->alias,
						 column_ref(related, single_key(related_key, related)),
						 column_ref(parent, field->column));
	else if (field->through)
	{
		Table	   *junction = open_table(cx, field->namespace, field->through->table);

		appendStringInfo(&buf, "FROM %s %s JOIN %s %s ON %s OPERATOR(pg_catalog.=) %s "
						 "WHERE %s OPERATOR(pg_catalog.=) %s",
						 junction->qualified, junction->alias,
						 related->qualified, related->alias,
						 column_ref(related, single_key(related_key, related)),
						 column_ref(junction, field->through->right_key),
						 column_ref(junction, field->through->left_key),
						 column_ref(parent, single_key(parent_key, parent)));
	}
	else
		appendStringInfo(&buf, "FROM %s %s WHERE %s OPERATOR(pg_catalog.=) %s",
						 related->qualified, related->alias,
						 column_ref(related, field->foreign_key),
						 column_ref(parent, single_key(parent_key, parent)));
	append_filters(cx, &buf, &field->filters, related);
	return buf.data;
}

static char *
join_expr(BuildContext *cx, const SchemaField *field, const Table *parent,
		  const ColumnList *parent_key)
{
	Table	   *related = open_table(cx, field->namespace, field->table);
	const ColumnList *key = &field->primary_key;
	char	   *doc = object_expr(cx, &field->children, related, key);
	char	   *rows = related_rows(cx, field, parent, parent_key, related, key);
	char	   *order = order_clause(field, related, key);

	if (field->join == JOIN_BELONGS_TO)
		return psprintf("(SELECT %s %s)", doc, rows);
	if (field->join == JOIN_HAS_ONE)
		return psprintf("(SELECT %s %s ORDER BY %s LIMIT 1)", doc, rows, order);
	return psprintf("(SELECT COALESCE(pg_catalog.jsonb_agg(s.doc ORDER BY s.ord), '[]'::pg_catalog.jsonb) "
					"FROM (SELECT %s AS doc, pg_catalog.row_number() OVER (ORDER BY %s) AS ord %s "
					"ORDER BY %s%s) s)",
					doc, order, rows, order,
					field->limit > 0 ? psprintf(" LIMIT %d", field->limit) : "");
}

static char *
aggregate_expr(BuildContext *cx, const SchemaField *field, const Table *parent,
			   const ColumnList *parent_key)
{
	Table	   *related = open_table(cx, field->namespace, field->table);
	ColumnList	key = field->through || field->aggregate == AGG_IDS
		? doc_primary_key(related->relid, related->qualified) : (ColumnList) {0, NULL};
	char	   *rows = related_rows(cx, field, parent, parent_key, related, &key);

	switch (field->aggregate)
	{
		case AGG_COUNT:
			return psprintf("(SELECT pg_catalog.count(*) %s)", rows);
		case AGG_AVG:
			return finite_expr(psprintf("(SELECT pg_catalog.avg(%s)::pg_catalog.float8 %s)",
										column_ref(related, field->column), rows),
							   FLOAT8OID);
		case AGG_SUM:
		case AGG_MIN:
		case AGG_MAX:
			return finite_expr(psprintf("(SELECT pg_catalog.%s(%s) %s)",
										schema_aggregate_name(field->aggregate),
										column_ref(related, field->column), rows),
							   column_type(related, field->column));
		case AGG_IDS:
			{
				char	   *id = column_ref(related, single_key(&key, related));

				return psprintf("(SELECT COALESCE(pg_catalog.jsonb_agg(%s ORDER BY %s), '[]'::pg_catalog.jsonb) %s)",
								id, id, rows);
			}
	}
	return NULL;
}

static char *
geo_expr(const SchemaField *field, const Table *table)
{
	if (field->lat == NULL)
		return column_ref(table, field->column);
	return psprintf("CASE WHEN %s IS NULL OR %s IS NULL THEN NULL "
					"ELSE pg_catalog.jsonb_build_object('lat', %s, 'lon', %s) END",
					column_ref(table, field->lat), column_ref(table, field->lon),
					column_ref(table, field->lat), column_ref(table, field->lon));
}

static char *
field_expr(BuildContext *cx, const SchemaField *field, const Table *table,
		   const ColumnList *table_key)
{
	StringInfoData json;

	switch (field->kind)
	{
		case FIELD_SCALAR:
		case FIELD_CUSTOM:
			return scalar_expr(cx, field, table);
		case FIELD_MAP:
			return column_ref(table, field->column);
		case FIELD_GEO:
			return geo_expr(field, table);
		case FIELD_OBJECT:
			return object_expr(cx, &field->children, table, table_key);
		case FIELD_JOIN:
			return join_expr(cx, field, table, table_key);
		case FIELD_AGGREGATE:
			return aggregate_expr(cx, field, table, table_key);
		case FIELD_CONSTANT:
			initStringInfo(&json);
			schema_value_to_json(&json, field->value, true);
			return psprintf("%s::pg_catalog.jsonb",
							add_param(cx, TEXTOID, CStringGetTextDatum(json.data)));
	}
	return NULL;
}

/*
 * pieces[lo..hi) joined with ||, as a balanced tree: a chain of thousands
 * of || would nest as deep, and the parser and executor recurse over it.
 */
static char *
concat_balanced(char **pieces, int lo, int hi)
{
	int			mid = lo + (hi - lo) / 2;

	if (hi - lo == 1)
		return pieces[lo];
	return psprintf("(%s OPERATOR(pg_catalog.||) %s)",
					concat_balanced(pieces, lo, mid), concat_balanced(pieces, mid, hi));
}

/* jsonb_build_object over the fields, in pieces of PAIRS_PER_CALL. */
static char *
object_expr(BuildContext *cx, const SchemaFieldList *fields, const Table *table,
			const ColumnList *table_key)
{
	int			npieces = (fields->nfields + PAIRS_PER_CALL - 1) / PAIRS_PER_CALL;
	char	  **pieces;

	if (fields->nfields == 0)
		return pstrdup("'{}'::pg_catalog.jsonb");
	pieces = palloc(sizeof(char *) * npieces);
	for (int p = 0; p < npieces; p++)
	{
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfoString(&buf, "pg_catalog.jsonb_build_object(");
		for (int i = p * PAIRS_PER_CALL; i < Min(fields->nfields, (p + 1) * PAIRS_PER_CALL); i++)
		{
			const SchemaField *field = fields->fields[i];

			appendStringInfo(&buf, "%s%s, %s", i % PAIRS_PER_CALL ? ", " : "",
							 quote_literal_cstr(field->name),
							 field_expr(cx, field, table, table_key));
		}
		appendStringInfoChar(&buf, ')');
		pieces[p] = buf.data;
	}
	return concat_balanced(pieces, 0, npieces);
}

DocumentQuery *
doc_build_query(const IndexSchema *schema)
{
	BuildContext cx = {NIL, NIL, 0};
	DocumentQuery *query = palloc0(sizeof(DocumentQuery));
	Table	   *root = open_table(&cx, schema->namespace, schema->table);
	ColumnList	key = schema->primary_key.ncolumns > 0
		? schema->primary_key : doc_primary_key(root->relid, root->qualified);
	char	   *doc = object_expr(&cx, &schema->fields, root, &key);
	StringInfoData where;
	StringInfoData keys;
	char	  **key_refs;
	ListCell   *lc;
	int			n = 0;

	initStringInfo(&where);
	initStringInfo(&keys);
	append_filters(&cx, &where, &schema->filters, root);
	if (schema->soft_delete)
	{
		const char *column = schema->soft_delete->column;
		StringInfoData when;

		for (int i = 0; column == NULL && i < schema->fields.nfields; i++)
		{
			if (strcmp(schema->fields.fields[i]->name, schema->soft_delete->field) == 0)
				column = schema->fields.fields[i]->column;
		}
		initStringInfo(&when);
		append_filters(&cx, &when, &schema->soft_delete->when, root);
		appendStringInfo(&where, " AND NOT (%s %s%s)", column_ref(root, column),
						 column_type(root, column) == BOOLOID ? "IS TRUE" : "IS NOT NULL",
						 when.data);
	}

	query->nparams = list_length(cx.param_types);
	query->nkeys = key.ncolumns;
	query->key_columns = key.columns;
	query->key_types = palloc(sizeof(Oid) * Max(key.ncolumns, 1));
	query->root_relid = root->relid;
	query->root_qualified = root->qualified;
	key_refs = palloc(sizeof(char *) * Max(key.ncolumns, 1));
	for (int i = 0; i < key.ncolumns; i++)
	{
		query->key_types[i] = column_type(root, key.columns[i]);
		key_refs[i] = column_ref(root, key.columns[i]);
		appendStringInfo(&keys, key.ncolumns == 1 ? "%s$%d::pg_catalog.text[]::%s[]"
						 : "%spg_catalog.unnest($%d::pg_catalog.text[]::%s[])", i ? ", " : "",
						 query->nparams + i + 1,
						 doc_type_name(column_type(root, key.columns[i])));
	}
	if (key.ncolumns == 1)
		query->sql = psprintf("SELECT %s AS id, %s AS doc FROM %s %s "
							  "WHERE %s OPERATOR(pg_catalog.=) ANY(%s)%s",
							  doc_id_sql(key_refs, 1), doc, root->qualified, root->alias,
							  key_refs[0], keys.data, where.data);
	else
	{
		StringInfoData cols;

		initStringInfo(&cols);
		for (int i = 0; i < key.ncolumns; i++)
			appendStringInfo(&cols, "%s%s", i ? ", " : "", key_refs[i]);
		query->sql = psprintf("SELECT %s AS id, %s AS doc FROM %s %s "
							  "WHERE ROW(%s) OPERATOR(pg_catalog.=) ANY (SELECT * FROM ROWS FROM (%s))%s",
							  doc_id_sql(key_refs, key.ncolumns), doc, root->qualified,
							  root->alias, cols.data, keys.data, where.data);
	}

	query->param_types = palloc(sizeof(Oid) * (query->nparams + query->nkeys));
	query->param_values = palloc(sizeof(Datum) * (query->nparams + query->nkeys));
	foreach(lc, cx.param_types)
		query->param_types[n++] = lfirst_oid(lc);
	n = 0;
	foreach(lc, cx.param_values)
		query->param_values[n++] = (Datum) lfirst(lc);
	for (int i = 0; i < query->nkeys; i++)
		query->param_types[query->nparams + i] = TEXTARRAYOID;
	return query;
}

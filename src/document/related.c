/*-------------------------------------------------------------------------
 *
 * related.c
 *	  The joins and aggregates of the build statement, read set-based: for
 *	  the keys at hand, each related table is read once per level, grouped
 *	  by the value it joins on, and LEFT JOINed back to the rows it belongs
 *	  to.  build.c owns the objects, values and filters these are made of.
 *
 * A subquery correlated with each parent row reads the related table once
 * per parent, which without an index on the child's foreign key costs
 * parents x children.  Here a level is restricted to the keys at hand
 * instead: "= ANY" of the root's key array for a level right under the
 * root, a semi-join to its parent level's rows below that; the planner
 * then hashes the keys or uses the index, whichever is cheaper, and the
 * cost stays linear either way.
 *
 * A join's rows are a WITH item l<n>, read under the alias t<n>: the
 * related table's columns, the value it joins on as "flusso.key" (the
 * foreign key, the junction's left key, or for belongs_to the related
 * key) and, for has_one and a to-many join with a limit, the row's rank
 * within that value as "flusso.rank": row_number() over order_by and then
 * the primary key, so ties break the same way every time.  A level under
 * it takes its keys from that item, ranks past the limit left out.
 * PostgreSQL materializes an item that is read twice and inlines one read
 * once, so a table is read once per level either way.  The join itself
 * is a derived table j<n> of (k, doc): one object per k for belongs_to
 * and has_one (the rank-1 row), a jsonb_agg in rank (or order_by) order
 * for has_many and many_to_many.  An aggregate is a derived table a<n> of
 * (k, v), grouped the same way; one over the very rows of a join of the
 * same parent (the same table and foreign key, neither filtered) reads
 * that join's item rather than its table again.  Where no related row
 * matches, the document gets what a correlated subquery gave: null, [] or
 * 0.
 *
 * "flusso.key" and "flusso.rank" cannot be a column a definition names
 * (its identifiers are lower-case letters, digits and _); a table that
 * has such a column fails to build as "ambiguous", it never builds wrong.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "document/build.h"
#include "document/build_internal.h"

/* ORDER BY of a to-many join or has_one: declared order, then the key. */
static char *
order_clause(const SchemaField *field, const Table *related, const ColumnList *key)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < field->norder_by; i++)
		appendStringInfo(&buf, "%s%s %s", buf.len ? ", " : "",
						 doc_column_ref(related, field->order_by[i].column),
						 field->order_by[i].descending ? "DESC" : "ASC");
	for (int i = 0; i < key->ncolumns; i++)
		appendStringInfo(&buf, "%s%s", buf.len ? ", " : "",
						 doc_column_ref(related, key->columns[i]));
	return buf.data;
}

/*
 * The values of column among parent's rows at hand, for "= ANY(...)": the
 * root's key array itself, or a subquery over the parent's rows.
 */
static char *
keys_at_hand(const Table *parent, const char *column)
{
	if (parent->key_array && strcmp(parent->key_column, column) == 0)
		return parent->key_array;
	return psprintf("SELECT %s %s", doc_column_ref(parent, column), parent->rows);
}

/*
 * FROM and WHERE that pick the related rows of a join or an aggregate for
 * the parent's rows at hand.  *level_key is set to the value the rows join
 * on, *parent_column to the parent's column it matches.
 */
static char *
related_rows(BuildContext *cx, const SchemaField *field, const Table *parent,
			 const ColumnList *parent_key, const Table *related,
			 const ColumnList *related_key, char **level_key,
			 const char **parent_column)
{
	StringInfoData buf;

	initStringInfo(&buf);
	if (field->kind == FIELD_JOIN && field->join == JOIN_BELONGS_TO)
	{
		*level_key = doc_column_ref(related, doc_single_key(related_key, related));
		*parent_column = field->column;
		appendStringInfo(&buf, "FROM %s %s", related->from, related->alias);
	}
	else if (field->through)
	{
		Table	   *junction = doc_open_table(cx, field->namespace, field->through->table);

		appendStringInfo(&buf, "FROM %s %s JOIN %s %s ON %s OPERATOR(pg_catalog.=) %s",
						 junction->from, junction->alias,
						 related->from, related->alias,
						 doc_column_ref(related, doc_single_key(related_key, related)),
						 doc_column_ref(junction, field->through->right_key));
		*level_key = doc_column_ref(junction, field->through->left_key);
		*parent_column = doc_single_key(parent_key, parent);
	}
	else
	{
		*level_key = doc_column_ref(related, field->foreign_key);
		*parent_column = doc_single_key(parent_key, parent);
		appendStringInfo(&buf, "FROM %s %s", related->from, related->alias);
	}
	appendStringInfo(&buf, " WHERE %s OPERATOR(pg_catalog.=) ANY(%s)",
					 *level_key, keys_at_hand(parent, *parent_column));
	doc_append_filters(cx, &buf, &field->filters, related);
	return buf.data;
}

/*
 * Does field (a join or an aggregate) read every row of its table whose
 * foreign key matches the parent's rows at hand: no junction, no filter,
 * not the parent's own reference (belongs_to)?  Such a join's item holds
 * the rows such an aggregate reads.
 */
static bool
all_rows_by_foreign_key(const SchemaField *field)
{
	return !field->through && field->filters.nfilters == 0 &&
		!(field->kind == FIELD_JOIN && field->join == JOIN_BELONGS_TO);
}

static bool
same_name(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/*
 * A join: its rows become a WITH item, its objects a derived table joined
 * to parent; returns the field's value as parent's object reads it.
 */
char *
doc_join_expr(BuildContext *cx, const SchemaField *field, Table *parent,
			  const ColumnList *parent_key)
{
	Table	   *related = doc_open_table(cx, field->namespace, field->table);
	const ColumnList *key = &field->primary_key;
	bool		to_many = field->join == JOIN_HAS_MANY || field->join == JOIN_MANY_TO_MANY;
	int			limit = field->join == JOIN_HAS_ONE ? 1 : to_many ? field->limit : 0;
	char	   *level = psprintf("l%d", related->number);
	char	   *derived = psprintf("j%d", related->number);
	char	   *level_ref = psprintf("%s %s", level, related->alias);
	char	   *key_ref = psprintf("%s.\"flusso.key\"", related->alias);
	char	   *rank_ref = psprintf("%s.\"flusso.rank\"", related->alias);
	char	   *in_rank = limit > 0
		? psprintf(" WHERE %s OPERATOR(pg_catalog.<=) %d", rank_ref, limit) : "";
	int			slot;
	char	   *doc;
	char	   *rows;
	char	   *order;
	char	   *level_key;
	const char *parent_column;

	/* the levels under this one read its item, so it goes before theirs */
	cx->levels = lappend(cx->levels, NULL);
	slot = list_length(cx->levels) - 1;
	related->rows = psprintf("FROM %s%s", level_ref, in_rank);
	doc = doc_object_expr(cx, &field->children, related, key);
	rows = related_rows(cx, field, parent, parent_key, related, key, &level_key, &parent_column);
	order = order_clause(field, related, key);
	lfirst(list_nth_cell(cx->levels, slot)) =
		psprintf("%s AS (SELECT %s.*, %s AS \"flusso.key\"%s %s)",
				 level, related->alias, level_key,
				 limit > 0 ? psprintf(", pg_catalog.row_number() OVER (PARTITION BY %s ORDER BY %s) AS \"flusso.rank\"",
									  level_key, order) : "",
				 rows);

	if (all_rows_by_foreign_key(field))
	{
		JoinLevel  *shared = palloc(sizeof(JoinLevel));

		shared->parent = parent;
		shared->field = field;
		shared->related = related;
		shared->level = level;
		cx->join_levels = lappend(cx->join_levels, shared);
	}
	appendStringInfo(&parent->joins, " LEFT JOIN (SELECT %s AS k, ", key_ref);
	if (to_many)
		appendStringInfo(&parent->joins, "pg_catalog.jsonb_agg(%s ORDER BY %s) AS doc FROM %s%s%s GROUP BY %s",
						 doc, limit > 0 ? rank_ref : order, level_ref,
						 related->joins.data, in_rank, key_ref);
	else
		appendStringInfo(&parent->joins, "%s AS doc FROM %s%s%s",
						 doc, level_ref, related->joins.data, in_rank);
	appendStringInfo(&parent->joins, ") %s ON %s.k OPERATOR(pg_catalog.=) %s",
					 derived, derived, doc_column_ref(parent, parent_column));
	if (to_many)
		return psprintf("COALESCE(%s.doc, '[]'::pg_catalog.jsonb)", derived);
	return psprintf("%s.doc", derived);
}


/*
 * The item of a join of parent that holds exactly the rows aggregate
 * field reads: the same table through the same foreign key, neither
 * filtered.  NULL if there is none.
 */
static JoinLevel *
join_level_of(BuildContext *cx, const SchemaField *field, const Table *parent)
{
	ListCell   *lc;

	if (!all_rows_by_foreign_key(field))
		return NULL;
	foreach(lc, cx->join_levels)
	{
		JoinLevel  *level = lfirst(lc);

		if (level->parent == parent &&
			same_name(level->field->namespace, field->namespace) &&
			same_name(level->field->table, field->table) &&
			same_name(level->field->foreign_key, field->foreign_key))
			return level;
	}
	return NULL;
}

/*
 * An aggregate: a derived table of its value per join value, joined to
 * parent; returns the field's value as parent's object reads it.
 */
char *
doc_aggregate_expr(BuildContext *cx, const SchemaField *field, Table *parent,
				   const ColumnList *parent_key)
{
	JoinLevel  *shared = join_level_of(cx, field, parent);
	Table	   *related = shared ? shared->related
		: doc_open_table(cx, field->namespace, field->table);
	ColumnList	key = field->through || field->aggregate == AGG_IDS
		? doc_primary_key(related->relid, related->qualified) : (ColumnList) {0, NULL};
	char	   *level_key;
	const char *parent_column;
	char	   *rows;
	char	   *derived = psprintf("a%d", shared ? cx->aliases++ : related->number);
	char	   *value = psprintf("%s.v", derived);
	char	   *aggregate = NULL;
	char	   *expr = NULL;

	if (shared)
	{
		level_key = psprintf("%s.\"flusso.key\"", related->alias);
		parent_column = doc_single_key(parent_key, parent);
		rows = psprintf("FROM %s %s", shared->level, related->alias);
	}
	else
		rows = related_rows(cx, field, parent, parent_key, related, &key,
							&level_key, &parent_column);

	switch (field->aggregate)
	{
		case AGG_COUNT:
			aggregate = "pg_catalog.count(*)";
			expr = psprintf("COALESCE(%s, 0)", value);
			break;
		case AGG_AVG:
			aggregate = psprintf("pg_catalog.avg(%s)::pg_catalog.float8",
								 doc_column_ref(related, field->column));
			expr = doc_finite_expr(value, FLOAT8OID);
			break;
		case AGG_SUM:
		case AGG_MIN:
		case AGG_MAX:
			aggregate = psprintf("pg_catalog.%s(%s)", schema_aggregate_name(field->aggregate),
								 doc_column_ref(related, field->column));
			expr = doc_finite_expr(value, doc_column_type(related, field->column));
			break;
		case AGG_IDS:
			{
				char	   *id = doc_column_ref(related, doc_single_key(&key, related));

				aggregate = psprintf("pg_catalog.jsonb_agg(%s ORDER BY %s)", id, id);
				expr = psprintf("COALESCE(%s, '[]'::pg_catalog.jsonb)", value);
			}
			break;
	}
	appendStringInfo(&parent->joins, " LEFT JOIN (SELECT %s AS k, %s AS v %s GROUP BY 1) %s "
					 "ON %s.k OPERATOR(pg_catalog.=) %s",
					 level_key, aggregate, rows, derived, derived,
					 doc_column_ref(parent, parent_column));
	return expr;
}

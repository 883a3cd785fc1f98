/*-------------------------------------------------------------------------
 *
 * lookups.c
 *	  Whether the columns an index finds related rows by have an index
 *	  leading with them, and the CREATE INDEX CONCURRENTLY that would add
 *	  one where they have not.
 *
 * A build reads a child by its foreign key, a junction by its left key and
 * a belongs_to target or a junction's far side by its key, once per parent
 * row; resolving a change reads a junction by its right key, a belongs_to
 * referrer by its foreign key and, above the first level, a parent by its
 * key.  Without an index each of those reads scans the whole table, so
 * flusso_check() warns and flusso_provision() gives the statement, which
 * it does not run: CREATE INDEX CONCURRENTLY cannot run in a function, and
 * building one on a large table is the operator's call.
 *
 * A column is served by a valid, non-partial btree or hash index whose
 * first key column it is.  A partitioned table is served by such a
 * partitioned index (valid once every partition has one); otherwise each
 * of its partitions must be, and each one that is not is reported alone,
 * since CREATE INDEX CONCURRENTLY cannot build a partitioned index.
 * Partitions that are foreign tables cannot be indexed and are left out.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "check/lookups.h"
#include "util/attempt.h"
#include "document/resolve.h"

typedef struct CompiledResolver
{
	const IndexSchema *schema;
	IndexResolver *resolver;
} CompiledResolver;

static void
compile_resolver(void *arg)
{
	CompiledResolver *compiled = arg;

	compiled->resolver = doc_compile_resolver(compiled->schema);
}

/*
 * Add to *tables the columns resolving a change reads tables by: every
 * step of every rule, for changes to the rule's table.  Nothing when the
 * resolver cannot be compiled (a name that does not resolve, reported
 * otherwise).
 */
void
lookups_add_resolved(List **tables, const IndexSchema *schema)
{
	CompiledResolver compiled = {schema, NULL};
	char	   *failure;
	ListCell   *lc;

	if (!attempt(compile_resolver, &compiled, &failure))
		return;
	foreach(lc, compiled.resolver->rules)
	{
		ResolveRule *rule = lfirst(lc);
		char	   *changed = psprintf("%s.%s", rule->nspname, rule->relname);

		for (ResolveStep *step = rule->steps; step != NULL; step = step->next)
			table_use_add_lookup(table_use_merge(tables, step->relid, "table"),
								 step->column, changed);
	}
}

/* Does a valid, non-partial btree or hash index of relid lead with attnum? */
static bool
index_leads_with(Oid relid, AttrNumber attnum)
{
	Relation	rel = table_open(relid, AccessShareLock);
	List	   *indexes = RelationGetIndexList(rel);
	bool		found = false;
	ListCell   *lc;

	table_close(rel, AccessShareLock);
	foreach(lc, indexes)
	{
		Oid			indexoid = lfirst_oid(lc);
		HeapTuple	tuple = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
		Form_pg_index index;
		HeapTuple	classtup;
		Oid			am;

		if (!HeapTupleIsValid(tuple))
			continue;
		index = (Form_pg_index) GETSTRUCT(tuple);
		found = index->indisvalid && index->indislive &&
			index->indkey.values[0] == attnum &&
			heap_attisnull(tuple, Anum_pg_index_indpred, NULL);
		ReleaseSysCache(tuple);
		if (!found)
			continue;
		classtup = SearchSysCache1(RELOID, ObjectIdGetDatum(indexoid));
		if (!HeapTupleIsValid(classtup))
		{
			found = false;
			continue;
		}
		am = ((Form_pg_class) GETSTRUCT(classtup))->relam;
		ReleaseSysCache(classtup);
		found = am == BTREE_AM_OID || am == HASH_AM_OID;
		if (found)
			break;
	}
	return found;
}

/* "12 MB (about 120000 rows)", or the size alone for a table never analyzed */
static char *
table_size(Oid relid)
{
	Datum		bytes = DirectFunctionCall1(pg_total_relation_size, ObjectIdGetDatum(relid));
	char	   *size = text_to_cstring(DatumGetTextPP(DirectFunctionCall1(pg_size_pretty, bytes)));
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	float4		reltuples = -1;

	if (HeapTupleIsValid(tuple))
	{
		reltuples = ((Form_pg_class) GETSTRUCT(tuple))->reltuples;
		ReleaseSysCache(tuple);
	}
	if (reltuples < 0)
		return size;
	return psprintf("%s (about %.0f rows)", size, reltuples);
}

static char *
display_name(Oid relid)
{
	return psprintf("%s.%s", get_namespace_name(get_rel_namespace(relid)), get_rel_name(relid));
}

static MissingIndex *
missing_index(const TableUse *table, Oid relid, const TableLookup *lookup)
{
	MissingIndex *missing = palloc0(sizeof(MissingIndex));
	Oid			nspid = get_rel_namespace(relid);
	char	   *relname = get_rel_name(relid);
	char	   *display = display_name(relid);
	char	   *name = ChooseRelationName(relname, lookup->column, "idx", nspid, false);

	missing->action = psprintf("index %s (%s)", display, lookup->column);
	missing->sql = psprintf("CREATE INDEX CONCURRENTLY %s ON %s (%s)",
							quote_identifier(name),
							quote_qualified_identifier(get_namespace_name(nspid), relname),
							quote_identifier(lookup->column));
	missing->message =
		psprintf("%s is read by \"%s\", which no index leads with: %s scans its %s",
				 relid == table->relid
				 ? psprintf("table \"%s\"", display)
				 : psprintf("partition \"%s\" of table \"%s\"", display, table->display),
				 lookup->column,
				 lookup->changed
				 ? psprintf("every change to table \"%s\"", lookup->changed)
				 : "every build",
				 table_size(relid));
	return missing;
}

static int
compare_relid_names(const ListCell *a, const ListCell *b)
{
	Oid			x = lfirst_oid(a);
	Oid			y = lfirst_oid(b);
	int			c = strcmp(get_namespace_name(get_rel_namespace(x)),
						   get_namespace_name(get_rel_namespace(y)));

	return c != 0 ? c : strcmp(get_rel_name(x), get_rel_name(y));
}

/*
 * The tables under relid (itself, or its partitions at any depth) whose
 * rows no index finds by column, by name.
 */
static List *
unserved_tables(Oid relid, const char *column)
{
	AttrNumber	attnum = get_attnum(relid, column);
	char		relkind = get_rel_relkind(relid);
	List	   *unserved = NIL;
	List	   *children;
	ListCell   *lc;

	if (attnum == InvalidAttrNumber || relkind == RELKIND_FOREIGN_TABLE ||
		index_leads_with(relid, attnum))
		return NIL;
	if (relkind != RELKIND_PARTITIONED_TABLE)
		return list_make1_oid(relid);
	children = find_inheritance_children(relid, AccessShareLock);
	list_sort(children, compare_relid_names);
	foreach(lc, children)
		unserved = list_concat(unserved, unserved_tables(lfirst_oid(lc), column));
	return unserved;
}

/* What the table's lookups lack (MissingIndex), in lookup order. */
List *
lookups_missing(const TableUse *table)
{
	List	   *missing = NIL;
	ListCell   *lc;

	foreach(lc, table->lookups)
	{
		TableLookup *lookup = lfirst(lc);
		ListCell   *tc;

		foreach(tc, unserved_tables(table->relid, lookup->column))
			missing = lappend(missing, missing_index(table, lfirst_oid(tc), lookup));
	}
	return missing;
}

/* A warning for every lookup of the table that no index serves. */
void
check_lookups(DiagnosticSink *sink, const TableUse *table)
{
	ListCell   *lc;

	foreach(lc, lookups_missing(table))
	{
		MissingIndex *missing = lfirst(lc);

		diag_add(sink, SEVERITY_WARNING, table->path, psprintf("%s;", missing->sql),
				 "%s", missing->message);
	}
}

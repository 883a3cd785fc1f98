/*-------------------------------------------------------------------------
 *
 * keyset.c
 *	  Reading an index's root keys in key order, as its owner, under the
 *	  pinned settings: the largest key, a chunk of keys after a cursor by
 *	  keyset pagination (composite keys compared as row values, with the key
 *	  types' own ordering), and a set of keys less another one (compared
 *	  with the key types' own equality).  Keys travel as text: a key is a
 *	  char *[nkeys] of its values, rendered and cast back under the pinned
 *	  settings, and never null — a row whose key is null has no document.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "util/text_array.h"
#include "document/keyset.h"
#include "document/session.h"

/*
 * "r.k1, r.k2" of the root key, quoted, with a suffix such as " DESC".
 * Qualified, so that ORDER BY sorts the columns, not the text output
 * columns of the same names.
 */
static char *
key_list(const DocumentQuery *q, const char *suffix)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < q->nkeys; i++)
		appendStringInfo(&buf, "%sr.%s%s", i ? ", " : "", quote_identifier(q->key_columns[i]),
						 suffix);
	return buf.data;
}

/*
 * "r.k1 IS NOT NULL AND r.k2 IS NOT NULL": a row whose key is null has no
 * document (flusso_check() reports a key that can be null), and its null
 * would sort first in DESC order.
 */
char *
doc_keys_not_null_sql(const DocumentQuery *q)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < q->nkeys; i++)
		appendStringInfo(&buf, "%sr.%s IS NOT NULL", i ? " AND " : "",
						 quote_identifier(q->key_columns[i]));
	return buf.data;
}

/* "ROW($first::t1, $first+1::t2)": key values bound as text, cast */
static char *
key_params(const DocumentQuery *q, int first)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "ROW(");
	for (int i = 0; i < q->nkeys; i++)
		appendStringInfo(&buf, "%s$%d::%s", i ? ", " : "", first + i,
						 doc_type_name(q->key_types[i]));
	appendStringInfoChar(&buf, ')');
	return buf.data;
}

/* The keys of an SPI result, in the caller's memory context. */
static List *
result_keys(MemoryContext caller, int nkeys)
{
	MemoryContext spi = MemoryContextSwitchTo(caller);
	List	   *keys = NIL;

	for (uint64 row = 0; row < SPI_processed; row++)
	{
		char	  **key = palloc(sizeof(char *) * nkeys);

		for (int i = 0; i < nkeys; i++)
		{
			key[i] = SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, i + 1);
			if (key[i] == NULL)
				elog(ERROR, "a root key read is null");
		}
		keys = lappend(keys, key);
	}
	MemoryContextSwitchTo(spi);
	return keys;
}

/* Run sql as owner and return the keys it selects. */
static List *
select_keys(const DocumentQuery *q, Oid owner, const char *sql, int nargs,
			Oid *argtypes, Datum *values)
{
	MemoryContext caller = CurrentMemoryContext;
	BuildSession session;
	List	   *keys;

	doc_session_begin(&session, owner);
	SPI_connect();
	if (SPI_execute_with_args(sql, nargs, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the keys of %s", q->root_qualified);
	keys = result_keys(caller, q->nkeys);
	SPI_finish();
	doc_session_end(&session);
	return keys;
}

/* The largest root key, or NULL when the root table has no row. */
char **
doc_largest_key(const DocumentQuery *q, Oid owner)
{
	List	   *keys = select_keys(q, owner,
								   psprintf("SELECT %s FROM %s r WHERE %s ORDER BY %s LIMIT 1",
											key_list(q, "::pg_catalog.text"), q->root_from,
											doc_keys_not_null_sql(q), key_list(q, " DESC")),
								   0, NULL, NULL);

	return keys ? linitial(keys) : NULL;
}

/*
 * How many root rows there are, about: pg_class.reltuples (of a
 * partitioned table, its partitions'), or a count when the table, or one
 * of its partitions, was never analyzed.
 */
int64
doc_estimated_rows(const DocumentQuery *q, Oid owner)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(q->root_relid)};
	BuildSession session;
	int64		rows = 0;
	char	   *value;

	doc_session_begin(&session, owner);
	SPI_connect();
	if (SPI_execute_with_args("SELECT CASE WHEN pg_catalog.bool_and(c.reltuples OPERATOR(pg_catalog.>=) 0) "
							  "THEN pg_catalog.sum(c.reltuples)::pg_catalog.int8 END "
							  "FROM pg_catalog.pg_partition_tree($1) t "
							  "JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) t.relid "
							  "WHERE t.isleaf",
							  1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the size of %s", q->root_qualified);
	value = SPI_processed == 1 ? SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1) : NULL;
	if (value == NULL)
	{
		if (SPI_execute(psprintf("SELECT pg_catalog.count(*) FROM %s", q->root_from),
						true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not count the rows of %s", q->root_qualified);
		value = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	}
	rows = pg_strtoint64(value);
	SPI_finish();
	doc_session_end(&session);
	return rows;
}

/*
 * " AND ROW(r.k1, r.k2) op ROW($n::t1, $n+1::t2)" appended to sql, with
 * key's values bound as the next parameters.
 */
static void
compare_key(const DocumentQuery *q, StringInfo sql, const char *op, char **key,
			Oid *argtypes, Datum *values, int *nargs)
{
	appendStringInfo(sql, " AND ROW(%s) %s %s", key_list(q, ""), op, key_params(q, *nargs + 1));
	for (int i = 0; i < q->nkeys; i++)
	{
		argtypes[*nargs] = TEXTOID;
		values[(*nargs)++] = CStringGetTextDatum(key[i]);
	}
}

/*
 * Up to limit root keys in key order, after the key after (from the start
 * when NULL) and, when bounded, up to the key upto included (none when
 * NULL).
 */
static List *
read_keys(const DocumentQuery *q, Oid owner, char **after, bool bounded, char **upto,
		  int limit)
{
	StringInfoData sql;
	Oid		   *argtypes = palloc(sizeof(Oid) * (2 * q->nkeys + 1));
	Datum	   *values = palloc(sizeof(Datum) * (2 * q->nkeys + 1));
	int			nargs = 0;

	if (bounded && upto == NULL)
		return NIL;
	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT %s FROM %s r WHERE %s", key_list(q, "::pg_catalog.text"),
					 q->root_from, doc_keys_not_null_sql(q));
	if (after)
		compare_key(q, &sql, "OPERATOR(pg_catalog.>)", after, argtypes, values, &nargs);
	if (bounded)
		compare_key(q, &sql, "OPERATOR(pg_catalog.<=)", upto, argtypes, values, &nargs);
	argtypes[nargs] = INT4OID;
	values[nargs++] = Int32GetDatum(limit);
	appendStringInfo(&sql, " ORDER BY %s LIMIT $%d", key_list(q, ""), nargs);
	return select_keys(q, owner, sql.data, nargs, argtypes, values);
}

/*
 * Up to limit root keys in key order, after the key after (from the start
 * when NULL) and up to the key upto included (none when NULL): a seed's
 * chunk.
 */
List *
doc_read_keys(const DocumentQuery *q, Oid owner, char **after, char **upto, int limit)
{
	return read_keys(q, owner, after, true, upto, limit);
}

/*
 * Up to limit root keys in key order after the key after (from the start
 * when NULL), to the end of the table: a range the shipper seeds.
 */
List *
doc_read_keys_after(const DocumentQuery *q, Oid owner, char **after, int limit)
{
	return read_keys(q, owner, after, false, NULL, limit);
}

/*
 * SELECT k1::type, k2::type FROM ROWS FROM (unnest($first), ...) AS r(k1,
 * k2): keys bound as one text[] per key column, cast to the key's types.
 */
static char *
keys_relation(const DocumentQuery *q, int first)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "SELECT ");
	for (int k = 0; k < q->nkeys; k++)
		appendStringInfo(&buf, "%sk%d::%s", k ? ", " : "", k + 1, doc_type_name(q->key_types[k]));
	appendStringInfoString(&buf, " FROM ROWS FROM (");
	for (int k = 0; k < q->nkeys; k++)
		appendStringInfo(&buf, "%spg_catalog.unnest($%d)", k ? ", " : "", first + k);
	appendStringInfoString(&buf, ") AS r(");
	for (int k = 0; k < q->nkeys; k++)
		appendStringInfo(&buf, "%sk%d", k ? ", " : "", k + 1);
	appendStringInfoChar(&buf, ')');
	return buf.data;
}

/* keys less those in except, compared as values of the key types. */
List *
doc_keys_except(const DocumentQuery *q, Oid owner, List *keys, List *except)
{
	List	   *sets[2] = {keys, except};
	Oid		   *argtypes = palloc(sizeof(Oid) * 2 * q->nkeys);
	Datum	   *values = palloc(sizeof(Datum) * 2 * q->nkeys);
	StringInfoData sql;

	if (except == NIL)
		return keys;
	for (int s = 0; s < 2; s++)
	{
		for (int k = 0; k < q->nkeys; k++)
		{
			char	  **column = palloc(sizeof(char *) * Max(list_length(sets[s]), 1));
			int			n = 0;
			ListCell   *lc;

			foreach(lc, sets[s])
				column[n++] = ((char **) lfirst(lc))[k];
			argtypes[s * q->nkeys + k] = TEXTARRAYOID;
			values[s * q->nkeys + k] = text_array_from_strings(column, n);
		}
	}
	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT ");
	for (int k = 0; k < q->nkeys; k++)
		appendStringInfo(&sql, "%sk%d::pg_catalog.text", k ? ", " : "", k + 1);
	/* EXCEPT compares with the types' own equality, whatever search_path */
	appendStringInfo(&sql, " FROM (%s EXCEPT %s) AS d(", keys_relation(q, 1),
					 keys_relation(q, q->nkeys + 1));
	for (int k = 0; k < q->nkeys; k++)
		appendStringInfo(&sql, "%sk%d", k ? ", " : "", k + 1);
	appendStringInfoChar(&sql, ')');
	return select_keys(q, owner, sql.data, 2 * q->nkeys, argtypes, values);
}

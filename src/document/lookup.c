/*-------------------------------------------------------------------------
 *
 * lookup.c
 *	  Finding in the system catalogs the tables and columns a definition
 *	  names: flusso_check() reports what is missing, the build statement
 *	  and the resolution rules refuse it, in the same words; and how
 *	  generated SQL names a table's rows.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "utils/lsyscache.h"

#include "document/lookup.h"

#define LOOKUP_HINT "SELECT * FROM flusso_check() lists what the definition and the database disagree on."

/*
 * The table nspname.relname, or InvalidOid with *missing saying what does
 * not exist: the schema, or the table.
 */
Oid
doc_find_table(const char *nspname, const char *relname, char **missing)
{
	Oid			nsp = get_namespace_oid(nspname, true);
	Oid			relid;

	if (!OidIsValid(nsp))
	{
		*missing = psprintf("schema \"%s\" does not exist", nspname);
		return InvalidOid;
	}
	relid = get_relname_relid(relname, nsp);
	if (!OidIsValid(relid))
		*missing = psprintf("table \"%s.%s\" does not exist", nspname, relname);
	return relid;
}

/* The table nspname.relname; an error when it does not exist. */
Oid
doc_table(const char *nspname, const char *relname)
{
	char	   *missing;
	Oid			relid = doc_find_table(nspname, relname, &missing);

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("%s", missing),
				 errhint(LOOKUP_HINT)));
	return relid;
}

/* NULL when relid has a column of that name; what is missing otherwise. */
char *
doc_missing_column(Oid relid, const char *column)
{
	AttrNumber	attnum = get_attnum(relid, column);

	if (attnum != InvalidAttrNumber && attnum > 0)
		return NULL;
	return psprintf("column \"%s\" of table \"%s.%s\" does not exist", column,
					get_namespace_name(get_rel_namespace(relid)), get_rel_name(relid));
}

/* The column of relid; an error when it does not exist. */
AttrNumber
doc_column(Oid relid, const char *column)
{
	char	   *missing = doc_missing_column(relid, column);

	if (missing)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("%s", missing),
				 errhint(LOOKUP_HINT)));
	return get_attnum(relid, column);
}

/*
 * What generated SQL reads relid's rows from, given its quoted qualified
 * name: a partitioned table with its partitions, whose changes the output
 * plugin writes as the table's; any other table ONLY, since the rows of
 * tables that inherit from it are neither published with it nor followed.
 */
char *
doc_rows_of(Oid relid, const char *qualified)
{
	if (get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
		return pstrdup(qualified);
	return psprintf("ONLY %s", qualified);
}

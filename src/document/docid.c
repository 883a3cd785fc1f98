/*-------------------------------------------------------------------------
 *
 * docid.c
 *	  The one definition of a document's id, in SQL (the build statement
 *	  computes it) and in C (the worker names the documents it rebuilds,
 *	  flusso_build() reads an id back into key values).
 *
 * A single-column key's id is its value as text.  A composite key's id
 * joins the values with ':', and escapes a ':' or '\' inside a value with
 * '\', so that two different keys never share an id: ('x:y', 'z') is
 * x\:y:z and ('x', 'y:z') is x:y\:z.  Values without either character
 * read as before, and as the Rust flusso writes its _id.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"

#include "document/docid.h"

#define ID_SEPARATOR ':'
#define ID_ESCAPE '\\'

/*
 * The id of the row whose key columns are key_exprs, as an SQL expression
 * of type text.  Relies on standard_conforming_strings, which every build
 * runs with (util/pinned.c).
 */
char *
doc_id_sql(char *const *key_exprs, int nkeys)
{
	StringInfoData buf;

	if (nkeys == 1)
		return psprintf("%s::pg_catalog.text", key_exprs[0]);
	initStringInfo(&buf);
	appendStringInfoString(&buf, "pg_catalog.concat_ws(':'");
	for (int i = 0; i < nkeys; i++)
		appendStringInfo(&buf, ", pg_catalog.replace(pg_catalog.replace(%s::pg_catalog.text, "
						 "'\\', '\\\\'), ':', '\\:')", key_exprs[i]);
	appendStringInfoChar(&buf, ')');
	return buf.data;
}

/* The id of a key given as text values, as doc_id_sql() computes it. */
char *
doc_id_join(char *const *parts, int nkeys)
{
	StringInfoData buf;

	if (nkeys == 1)
		return pstrdup(parts[0]);
	initStringInfo(&buf);
	for (int i = 0; i < nkeys; i++)
	{
		if (i > 0)
			appendStringInfoChar(&buf, ID_SEPARATOR);
		for (const char *c = parts[i]; *c; c++)
		{
			if (*c == ID_SEPARATOR || *c == ID_ESCAPE)
				appendStringInfoChar(&buf, ID_ESCAPE);
			appendStringInfoChar(&buf, *c);
		}
	}
	return buf.data;
}

/*
 * Read an id back into its nkeys values (palloc'd, into parts).  False
 * when it does not have nkeys parts or ends in a lone escape.
 */
bool
doc_id_split(const char *id, int nkeys, char **parts)
{
	StringInfoData buf;
	int			n = 0;

	if (nkeys == 1)
	{
		parts[0] = pstrdup(id);
		return true;
	}
	initStringInfo(&buf);
	for (const char *c = id;; c++)
	{
		if (*c == ID_ESCAPE)
		{
			if (*++c == '\0')
				return false;
			appendStringInfoChar(&buf, *c);
		}
		else if (*c == ID_SEPARATOR || *c == '\0')
		{
			if (n == nkeys)
				return false;
			parts[n++] = pstrdup(buf.data);
			resetStringInfo(&buf);
			if (*c == '\0')
				break;
		}
		else
			appendStringInfoChar(&buf, *c);
	}
	return n == nkeys;
}

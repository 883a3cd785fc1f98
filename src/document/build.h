/*-------------------------------------------------------------------------
 *
 * build.h
 *	  The statement that builds the documents of an index from the current
 *	  state of its rows, for a set of root keys.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_DOCUMENT_BUILD_H
#define FLUSSO_DOCUMENT_BUILD_H

#include "schema/schema.h"

/*
 * SELECT id, doc FROM <root> WHERE <key> matches the key arrays AND the
 * row passes the root filters and is not soft-deleted.  The first nkeys
 * parameters are text[], one per root key column, holding the keys to
 * build; then come nparams constants of the definition (filter values,
 * defaults, constants), bound, never spliced.  A caller binds them with
 * doc_query_param_types() and doc_query_param_values(), and may bind more
 * after them, from $(nkeys + nparams + 1) on.
 */
typedef struct DocumentQuery
{
	char	   *sql;
	int			nparams;		/* definition constants, after the keys */
	Oid		   *param_types;	/* theirs */
	Datum	   *param_values;
	int			nkeys;			/* key columns, each a leading text[] */
	char	  **key_columns;	/* their names, in parameter order */
	Oid		   *key_types;		/* and their types */
	Oid			root_relid;
	char	   *root_qualified; /* schema-qualified, quoted */
	char	   *root_from;		/* what its rows are read from (doc_rows_of) */
} DocumentQuery;

extern DocumentQuery *doc_build_query(const IndexSchema *schema);
extern Oid *doc_query_param_types(const DocumentQuery *q, int nextra);
extern Datum *doc_query_param_values(const DocumentQuery *q, const Datum *key_arrays,
									 int nextra);
extern ColumnList doc_primary_key(Oid relid, const char *qualified);
extern char *doc_type_name(Oid type);

#endif							/* FLUSSO_DOCUMENT_BUILD_H */

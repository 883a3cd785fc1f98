/*-------------------------------------------------------------------------
 *
 * definition.h
 *	  Stored index definitions: validating definition text, and loading
 *	  every index of the database.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_INDEX_DEFINITION_H
#define FLUSSO_INDEX_DEFINITION_H

#include "nodes/pg_list.h"
#include "compat.h"
#include "schema/schema.h"

/* What a definition becomes once validated. */
typedef struct ParsedDefinition
{
	IndexSchema *schema;
	char	   *canonical;		/* canonical JSON text */
	char	   *version;		/* hash of the canonical text */
} ParsedDefinition;

/* One stored index. */
typedef struct StoredIndex
{
	char	   *name;
	char	   *version;
	Oid			owner;
	IndexSchema *schema;
} StoredIndex;

extern ParsedDefinition *index_parse_definition(const text *definition);
extern void index_check_raw_filters(const IndexSchema *schema);
extern List *index_load_all(void);
extern StoredIndex *index_load(const char *name);
pg_noreturn extern void index_report_missing(const char *name);
extern void index_lock_row(const char *name);
extern List *index_load_names(void);

#endif							/* FLUSSO_INDEX_DEFINITION_H */

/*-------------------------------------------------------------------------
 *
 * definition.h
 *	  Index definitions: validating definition text into the schema, the
 *	  canonical form and the version a row of flusso.index keeps.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_DEFINITION_H
#define FLUSSO_STORE_DEFINITION_H

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
pg_noreturn extern void index_report_missing(const char *name);

#endif							/* FLUSSO_STORE_DEFINITION_H */

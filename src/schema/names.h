/*-------------------------------------------------------------------------
 *
 * names.h
 *	  Vocabulary lookups and suggestions shared inside src/schema/.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SCHEMA_NAMES_H
#define FLUSSO_SCHEMA_NAMES_H

#include "schema/schema.h"

#define SCHEMA_MAX_NAME 63

extern const char *const field_type_keys[];
extern const char *const scalar_type_names[];

extern bool schema_join_from_name(const char *name, JoinKind *kind);
extern bool schema_aggregate_from_name(const char *name, AggregateKind *kind);
extern bool schema_filter_op_from_name(const char *name, FilterOp *op);
extern bool schema_valid_field_name(const char *name);
extern const char *schema_suggest(const char *word, const char *const *candidates);
extern char *schema_join_words(const char *const *words);

#endif							/* FLUSSO_SCHEMA_NAMES_H */

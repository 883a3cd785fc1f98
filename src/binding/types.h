/*-------------------------------------------------------------------------
 *
 * types.h
 *	  Which PostgreSQL column types each declared field type reads.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_BINDING_TYPES_H
#define FLUSSO_BINDING_TYPES_H

#include "schema/schema.h"

extern bool type_accepts(ScalarType type, Oid column_type);
extern bool type_is_integer(Oid column_type);
extern bool type_is_numeric(Oid column_type);
extern bool type_is_text(Oid column_type);
extern bool type_is_json(Oid column_type);
extern Oid	type_element(Oid column_type);
extern char *type_readers(Oid column_type);

#endif							/* FLUSSO_BINDING_TYPES_H */

/*-------------------------------------------------------------------------
 *
 * keys.h
 *	  Whether a declared key names at most one row.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_BINDING_KEYS_H
#define FLUSSO_BINDING_KEYS_H

#include "nodes/pg_list.h"

extern char *key_uniqueness_problem(Oid relid, const char *display, List *columns);

#endif							/* FLUSSO_BINDING_KEYS_H */

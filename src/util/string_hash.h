/*-------------------------------------------------------------------------
 *
 * string_hash.h
 *	  Hash tables keyed by a C string their entries point to.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_UTIL_STRING_HASH_H
#define FLUSSO_UTIL_STRING_HASH_H

#include "utils/hsearch.h"

extern HTAB *string_hash_create(const char *name, Size entrysize, MemoryContext context);

#endif							/* FLUSSO_UTIL_STRING_HASH_H */

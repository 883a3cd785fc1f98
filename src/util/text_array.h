/*-------------------------------------------------------------------------
 *
 * text_array.h
 *	  C strings in bulk: text[] values to and from them, and Lists of them.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_UTIL_TEXT_ARRAY_H
#define FLUSSO_UTIL_TEXT_ARRAY_H

#include "nodes/pg_list.h"

extern Datum text_array_from_strings(char **values, int n);
extern char **text_array_to_strings(Datum array, int n);
extern char **text_array_all_strings(Datum array, int *n);
extern bool string_list_member(List *strings, const char *s);

#endif							/* FLUSSO_UTIL_TEXT_ARRAY_H */

/*-------------------------------------------------------------------------
 *
 * text_array.h
 *	  text[] values to and from C strings.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_COMMON_TEXT_ARRAY_H
#define FLUSSO_COMMON_TEXT_ARRAY_H

extern Datum text_array_from_strings(char **values, int n);
extern char **text_array_to_strings(Datum array, int n);

#endif							/* FLUSSO_COMMON_TEXT_ARRAY_H */

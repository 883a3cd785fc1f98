/*-------------------------------------------------------------------------
 *
 * text_array.c
 *	  text[] values to and from C strings: how keys are bound as parameters
 *	  and kept in flusso's tables (a seed's cursor).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "util/text_array.h"

/* A text[] of the n strings of values. */
Datum
text_array_from_strings(char **values, int n)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		elems[i] = CStringGetTextDatum(values[i]);
	return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/* The strings of a text[] of n elements; NULL when it has another number. */
char **
text_array_to_strings(Datum array, int n)
{
	Datum	   *elems;
	int			nelems;
	char	  **out;

	deconstruct_array(DatumGetArrayTypeP(array), TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, NULL, &nelems);
	if (nelems != n)
		return NULL;
	out = palloc(sizeof(char *) * n);
	for (int i = 0; i < n; i++)
		out[i] = TextDatumGetCString(elems[i]);
	return out;
}

/*
 * Every string of a text[], however many (*n), a null element as NULL; a
 * multidimensional array read in storage order.
 */
char **
text_array_all_strings(Datum array, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	char	  **out;

	deconstruct_array(DatumGetArrayTypeP(array), TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &nulls, n);
	out = palloc(sizeof(char *) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
		out[i] = nulls[i] ? NULL : TextDatumGetCString(elems[i]);
	return out;
}

/* Is s one of strings, a List of C strings? */
bool
string_list_member(List *strings, const char *s)
{
	ListCell   *lc;

	foreach(lc, strings)
	{
		if (strcmp(lfirst(lc), s) == 0)
			return true;
	}
	return false;
}

/*-------------------------------------------------------------------------
 *
 * schema_fuzz.c
 *	  libFuzzer target for the schema parser: reads arbitrary bytes as a
 *	  definition, and for every accepted one writes the canonical form and
 *	  the mapping, which walk the whole model.
 *
 * The schema core allocates with palloc and relies on memory contexts to
 * free; a frontend program has none, so this harness supplies palloc and
 * friends over a list of allocations that is released after every input.
 * It also stands in for json_errdetail, which the frontend build of
 * PostgreSQL 15's jsonapi lacks.  Built and run by test/fuzz/run.sh (make fuzz), never by the test suite.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "common/jsonapi.h"
#include "mb/pg_wchar.h"
#include "schema/schema.h"

typedef struct Allocation
{
	struct Allocation *prev;
	struct Allocation *next;
	max_align_t data[];
} Allocation;

static Allocation arena = {&arena, &arena};

static void *
track(Allocation *a)
{
	if (a == NULL)
		abort();
	a->next = arena.next;
	a->prev = &arena;
	arena.next->prev = a;
	arena.next = a;
	return a->data;
}

static Allocation *
untrack(void *pointer)
{
	Allocation *a = (Allocation *) ((char *) pointer - offsetof(Allocation, data));

	a->prev->next = a->next;
	a->next->prev = a->prev;
	return a;
}

static void
release_all(void)
{
	while (arena.next != &arena)
		free(untrack(arena.next->data));
}

void *
palloc(Size size)
{
	return track(malloc(sizeof(Allocation) + size));
}

void *
palloc0(Size size)
{
	return track(calloc(1, sizeof(Allocation) + size));
}

void *
palloc_extended(Size size, int flags)
{
	return (flags & MCXT_ALLOC_ZERO) ? palloc0(size) : palloc(size);
}

void *
repalloc(void *pointer, Size size)
{
	return track(realloc(untrack(pointer), sizeof(Allocation) + size));
}

void
pfree(void *pointer)
{
	free(untrack(pointer));
}

char *
pstrdup(const char *in)
{
	return strcpy(palloc(strlen(in) + 1), in);
}

char *
pnstrdup(const char *in, Size size)
{
	char	   *out;

	size = strnlen(in, size);
	out = palloc(size + 1);
	memcpy(out, in, size);
	out[size] = '\0';
	return out;
}

/*
 * The frontend build of PostgreSQL 15's jsonapi has no json_errdetail; the
 * harness only needs some text.
 */
char *
json_errdetail(JsonParseErrorType error, JsonLexContext *lex)
{
	return psprintf("JSON error %d", (int) error);
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SchemaError *error = NULL;
	IndexSchema *schema;

	schema = schema_parse((const char *) data, (int) size, PG_UTF8, &error);
	if (schema != NULL)
	{
		(void) schema_canonical_json(schema);
		(void) schema_mapping_json(schema);
	}
	else if (error == NULL || error->message == NULL || error->path == NULL)
		abort();				/* a rejection must always say why */
	release_all();
	return 0;
}

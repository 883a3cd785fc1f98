/*-------------------------------------------------------------------------
 *
 * string_hash.c
 *	  Hash tables whose entries begin with a pointer to a C string, the
 *	  key: an entry costs what its string takes, not a fixed-size key
 *	  buffer (dynahash's HASH_STRINGS copies keys into keysize bytes).
 *	  The caller allocates the string, in memory that lives as long as
 *	  the entry.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"

#include "util/string_hash.h"

static uint32
string_pointer_hash(const void *key, Size keysize)
{
	const char *s = *(char *const *) key;

	return hash_bytes((const unsigned char *) s, strlen(s));
}

static int
string_pointer_match(const void *a, const void *b, Size keysize)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/*
 * A table in context whose entries, entrysize bytes each, start with the
 * char * they are found by.
 */
HTAB *
string_hash_create(const char *name, Size entrysize, MemoryContext context)
{
	HASHCTL		ctl;

	Assert(entrysize >= sizeof(char *));
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(char *);
	ctl.entrysize = entrysize;
	ctl.hash = string_pointer_hash;
	ctl.match = string_pointer_match;
	ctl.hcxt = context;
	return hash_create(name, 1024, &ctl,
					   HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
}

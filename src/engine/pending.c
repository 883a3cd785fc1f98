/*-------------------------------------------------------------------------
 *
 * pending.c
 *	  The documents an index owes: the ids its changes resolved to that
 *	  were not built yet.  A worker that is behind resolves batch after
 *	  batch before it builds, so that a document changed in many of them
 *	  is built once; the set therefore outlives the transactions it is
 *	  filled and emptied in.
 *
 * Ids are kept once, in a hash table, up to memory_limit bytes.  When the
 * table is full its ids are sorted and written, as a run, to a temporary
 * file, and the table starts empty again.  Reading merges the runs (the
 * table, if any ids were spilled, becoming the last one) and skips
 * repeats, so every id is handed out once whatever the number of ids, in
 * bounded memory.  The files are opened to outlive transactions and
 * belong to a resource owner of the set's own: the worker commits between
 * the slices it builds.  (A tuplesort's files cannot: they are closed
 * when the transaction that made them ends.)  Reading gives the ids in no
 * particular order while they fit in memory, in id order once spilled.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/pg_list.h"
#include "storage/buffile.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "util/string_hash.h"
#include "engine/pending.h"

/* how often the memory held is measured: it costs a walk of the contexts */
#define MEASURE_EVERY 1024

/* A sorted run of ids in a file, and where its reading stands. */
typedef struct Run
{
	BufFile    *file;
	char	   *head;			/* the next id to hand out, NULL at the end */
} Run;

struct PendingKeys
{
	MemoryContext context;		/* the set's */
	MemoryContext ids_context;	/* the table and its ids, reset with it */
	Size		memory_limit;
	HTAB	   *ids;			/* char * -> itself */
	List	   *runs;			/* Run: the tables spilled, in order */
	ResourceOwner owner;		/* owns the runs' files */
	int64		added;			/* ids added since the last reset */

	/* reading */
	char	  **listed;			/* the table's ids, when nothing spilled */
	int64		nlisted;
	int64		next;
	char	   *last;			/* the id handed out last, from the runs */
};

static int
id_compare(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

static void
create_table(PendingKeys *pending)
{
	pending->ids = string_hash_create("flusso pending ids", sizeof(char *),
									  pending->ids_context);
}

PendingKeys *
pending_create(MemoryContext parent, Size memory_limit)
{
	PendingKeys *pending = MemoryContextAllocZero(parent, sizeof(PendingKeys));

	pending->context = AllocSetContextCreate(parent, "flusso pending keys",
											 ALLOCSET_DEFAULT_SIZES);
	pending->ids_context = AllocSetContextCreate(pending->context, "flusso pending ids",
												 ALLOCSET_DEFAULT_SIZES);
	pending->memory_limit = memory_limit;
	pending->owner = ResourceOwnerCreate(NULL, "flusso pending keys");
	create_table(pending);
	return pending;
}

/* The table's ids, in an array in the table's memory; sorted if asked. */
static char **
table_ids(PendingKeys *pending, int64 *n, bool sorted)
{
	HASH_SEQ_STATUS scan;
	char	  **entry;
	char	  **ids;

	ids = MemoryContextAlloc(pending->ids_context,
							 sizeof(char *) * Max(hash_get_num_entries(pending->ids), 1));
	*n = 0;
	hash_seq_init(&scan, pending->ids);
	while ((entry = hash_seq_search(&scan)) != NULL)
		ids[(*n)++] = *entry;
	if (sorted)
		qsort(ids, *n, sizeof(char *), id_compare);
	return ids;
}

/* Write the table's ids, sorted, as a run, and empty the table. */
static void
spill(PendingKeys *pending)
{
	ResourceOwner saved = CurrentResourceOwner;
	MemoryContext old = MemoryContextSwitchTo(pending->context);
	Run		   *run = palloc0(sizeof(Run));
	int64		n;
	char	  **ids = table_ids(pending, &n, true);

	CurrentResourceOwner = pending->owner;
	run->file = BufFileCreateTemp(true);
	for (int64 i = 0; i < n; i++)
	{
		int			len = strlen(ids[i]);

		BufFileWrite(run->file, &len, sizeof(len));
		BufFileWrite(run->file, ids[i], len);
	}
	CurrentResourceOwner = saved;
	pending->runs = lappend(pending->runs, run);
	MemoryContextSwitchTo(old);
	hash_destroy(pending->ids);
	MemoryContextReset(pending->ids_context);
	create_table(pending);
}

/* Add an id; it is copied. */
void
pending_add(PendingKeys *pending, const char *id)
{
	bool		found;
	char	   *copy;

	pending->added++;
	copy = MemoryContextStrdup(pending->ids_context, id);
	(void) hash_search(pending->ids, &copy, HASH_ENTER, &found);
	if (found)
		pfree(copy);
	if (pending->added % MEASURE_EVERY == 0 &&
		MemoryContextMemAllocated(pending->ids_context, true) > pending->memory_limit)
		spill(pending);
}

bool
pending_is_empty(const PendingKeys *pending)
{
	return pending->added == 0;
}

/* Ids added since the set was last reset, repeats included. */
int64
pending_added(const PendingKeys *pending)
{
	return pending->added;
}

/* Move a run to its next id, or to its end. */
static void
run_advance(PendingKeys *pending, Run *run)
{
	ResourceOwner saved = CurrentResourceOwner;
	int			len;
	size_t		got;

	if (run->head)
		pfree(run->head);
	run->head = NULL;
	CurrentResourceOwner = pending->owner;
	got = BufFileRead(run->file, &len, sizeof(len));
	if (got == sizeof(len))
	{
		run->head = MemoryContextAlloc(pending->context, len + 1);
		if (BufFileRead(run->file, run->head, len) != (size_t) len)
			elog(ERROR, "could not read a flusso pending keys file");
		run->head[len] = '\0';
	}
	else if (got != 0)
		elog(ERROR, "could not read a flusso pending keys file");
	CurrentResourceOwner = saved;
}

/*
 * Get ready to hand out every id once.  The set must not be added to
 * until it is reset.
 */
void
pending_begin_read(PendingKeys *pending)
{
	ListCell   *lc;

	pending->next = 0;
	pending->last = NULL;
	if (pending->runs == NIL)
	{
		/* a table's scan cannot outlive a transaction: list the ids instead */
		pending->listed = table_ids(pending, &pending->nlisted, false);
		return;
	}
	if (hash_get_num_entries(pending->ids) > 0)
		spill(pending);
	foreach(lc, pending->runs)
	{
		Run		   *run = lfirst(lc);
		ResourceOwner saved = CurrentResourceOwner;

		CurrentResourceOwner = pending->owner;
		if (BufFileSeek(run->file, 0, 0, SEEK_SET) != 0)
			elog(ERROR, "could not rewind a flusso pending keys file");
		CurrentResourceOwner = saved;
		run_advance(pending, run);
	}
}

/*
 * The next id, valid until the next call, or NULL when every id was
 * handed out.
 */
char *
pending_next(PendingKeys *pending)
{
	if (pending->runs == NIL)
		return pending->next < pending->nlisted ? pending->listed[pending->next++] : NULL;
	for (;;)
	{
		Run		   *least = NULL;
		ListCell   *lc;

		foreach(lc, pending->runs)
		{
			Run		   *run = lfirst(lc);

			if (run->head && (least == NULL || strcmp(run->head, least->head) < 0))
				least = run;
		}
		if (least == NULL)
			return NULL;
		if (pending->last && strcmp(pending->last, least->head) == 0)
		{
			run_advance(pending, least);
			continue;
		}
		if (pending->last)
			pfree(pending->last);
		pending->last = least->head;
		least->head = NULL;
		run_advance(pending, least);
		return pending->last;
	}
}

/* Forget every id, and the runs' files with them. */
void
pending_reset(PendingKeys *pending)
{
	ListCell   *lc;

	foreach(lc, pending->runs)
	{
		Run		   *run = lfirst(lc);
		ResourceOwner saved = CurrentResourceOwner;

		CurrentResourceOwner = pending->owner;
		BufFileClose(run->file);
		CurrentResourceOwner = saved;
	}
	pending->runs = NIL;
	MemoryContextReset(pending->context);
	pending->ids_context = AllocSetContextCreate(pending->context, "flusso pending ids",
												 ALLOCSET_DEFAULT_SIZES);
	pending->ids = NULL;
	pending->last = NULL;
	pending->listed = NULL;
	pending->nlisted = 0;
	pending->next = 0;
	pending->added = 0;
	create_table(pending);
}

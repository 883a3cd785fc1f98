/*-------------------------------------------------------------------------
 *
 * catalog_seed.h
 *	  flusso.seed, the cursors of seeds in progress: every statement over
 *	  it, as a verb.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_CATALOG_SEED_H
#define FLUSSO_STORE_CATALOG_SEED_H

#include "nodes/pg_list.h"

/* A seed's saved row; keys are nkeys strings, or NULL. */
typedef struct SeedRow
{
	char	  **last_key;
	char	  **max_key;
	int64		done;
	int64		total;
} SeedRow;

extern bool catalog_read_seed(const char *name, const char *version, int nkeys,
							  MemoryContext context, SeedRow *row);
extern void catalog_start_seed(const char *name, const char *version,
							   char **max_key, int nkeys, int64 total);
extern void catalog_save_seed(const char *name, char **last_key, int nkeys, int64 done);
extern List *catalog_resumable_seeds(void);
extern void catalog_forget_seed(const char *name);
extern void catalog_forget_all_seeds(void);

#endif							/* FLUSSO_STORE_CATALOG_SEED_H */

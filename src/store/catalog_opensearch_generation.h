/*-------------------------------------------------------------------------
 *
 * catalog_opensearch_generation.h
 *	  flusso.opensearch_generation, the OpenSearch indexes of each index:
 *	  every statement over it, as a verb.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_CATALOG_OPENSEARCH_GENERATION_H
#define FLUSSO_STORE_CATALOG_OPENSEARCH_GENERATION_H

#include "access/xlogdefs.h"
#include "nodes/pg_list.h"

/*
 * The states of a generation, as flusso.opensearch_generation.state spells
 * them: filled by a seed, seeded (its seed ended, its alias not moved yet),
 * served under the index's alias, retired (deleted from OpenSearch, or
 * kept there when keep is set).
 */
typedef enum GenerationState
{
	GENERATION_SEEDING,
	GENERATION_SEEDED,
	GENERATION_SERVED,
	GENERATION_RETIRED
} GenerationState;

/* A generation as the shipper loads it. */
typedef struct GenerationRow
{
	int64		generation;
	char	   *index_name;
	char	   *server_name;
	Oid			owner;
	char	   *alias;
	char	   *concrete;
	GenerationState state;
	bool		created;		/* exists in OpenSearch */
	bool		keep;			/* retired, but left in OpenSearch */
	int64		seeded_version; /* -1: none */
	int64		truncate_version;	/* -1: none */
	char	   *create_body;	/* settings and mappings, to create it */
	char	   *live_settings;	/* replicas and refresh, once seeded */
	bool		drained;		/* nothing queued up to seeded_version waits */
	int64		rejected;		/* documents rejected since it was created */
	int64		ranges_version; /* seeded by ranges, at it; -1: by the queue */
	bool		ranges_done;	/* every range shipped */
	bool		remap;			/* to map the fields its index gained */
} GenerationRow;

extern bool generation_ranges_in_catalog(void);
extern bool generation_remap_in_catalog(void);

/* flusso_create_index's, for fields added in place */
extern void generation_mark_remap(const char *index);

/* the worker's, through the OpenSearch sink */
extern bool generation_any_active(const char *index);
extern bool generation_any_seeding(const char *index);
extern void generation_set_options(const char *index, const char *options);
extern void generation_begin(const char *index, const char *server, Oid owner,
							 const char *alias, const char *settings);
extern bool generation_seeding_by_ranges(const char *index);
extern uint64 generation_retire_seeding(const char *index);
extern void generation_seeded(const char *index);
extern void generation_truncate(const char *index, XLogRecPtr version);
extern void generation_retire_all(const char *index);
extern void generation_forget_active(const char *index);

/* the shipper's */
extern List *generation_load_all(void);
extern int64 *generation_targets(const char *index, int *n);
extern void generation_created(int64 generation);
extern void generation_remapped(int64 generation);
extern void generation_emptied(int64 generation, int64 truncate_version);
extern char **generation_ranges_after(int64 generation, int nkeys);
extern void generation_ranges_advance(int64 generation, char **key, int nkeys, int64 read);
extern void generation_ranges_finish(int64 generation);
extern void generation_serve(int64 generation);
extern bool generation_retire_served(int64 generation);
extern void generation_forget(int64 generation);
extern void generation_forget_every(void);
extern void generation_rename(int64 generation, const char *alias, const char *concrete);

/* both's: does OpenSearch mirror the table sink? */
extern int64 generation_mirroring_table(const char *index);

/* flusso_verify's */
extern char *generation_served(const char *index, char **server_name, char **alias);

#endif							/* FLUSSO_STORE_CATALOG_OPENSEARCH_GENERATION_H */

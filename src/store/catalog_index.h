/*-------------------------------------------------------------------------
 *
 * catalog_index.h
 *	  flusso.index, the stored indexes: every statement over it, as a verb.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_CATALOG_INDEX_H
#define FLUSSO_STORE_CATALOG_INDEX_H

#include "nodes/pg_list.h"
#include "store/definition.h"

/* loading, as the catalog owner */
extern List *catalog_load_indexes(void);
extern StoredIndex *catalog_load_index(const char *name);
extern List *catalog_index_names(void);

/* the SQL functions' statements (the caller chooses the role) */
extern bool catalog_insert_index(const char *name, const ParsedDefinition *parsed,
								 const text *source, Oid owner);
extern void catalog_replace_index(const char *name, const ParsedDefinition *parsed,
								  const text *source, bool in_place);
extern Oid	catalog_lock_index(const char *name);
extern void catalog_lock_index_row(const char *name);
extern bool catalog_delete_index(const char *name);
extern bool catalog_has_indexes(void);
extern void catalog_follow_owners(void);
extern bool catalog_forget_dropped(const char *name);

/* An index that ships to OpenSearch, with its sink's settings. */
typedef struct OpenSearchIndexRow
{
	char	   *name;
	Oid			owner;
	char	   *owner_name;
	char	   *server_name;
	char	   *on_error;		/* the sink's option, or NULL */
	char	   *stopped;		/* why shipping stopped, or NULL */
	char	   *conflict;		/* why its alias is not its own, or NULL */
	bool		take_alias;		/* flusso_adopt(): take it over */
} OpenSearchIndexRow;

/* the shipper's */
extern List *catalog_opensearch_indexes(void);

/* the worker's */
extern char *catalog_indexes_signature(const char *sinks_of_name);
extern List *catalog_indexes_to_seed(void);
extern bool catalog_share_index(const char *name);
extern bool catalog_lock_index_version(const char *name, const char *version,
									   bool for_update);
extern void catalog_mark_for_seeding(const char *name, bool touch);
extern void catalog_mark_all_for_seeding(void);
extern void catalog_mark_seeded(const char *name);

#endif							/* FLUSSO_STORE_CATALOG_INDEX_H */

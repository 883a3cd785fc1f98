/*-------------------------------------------------------------------------
 *
 * ship_catalog.h
 *	  What the shipper knows of each index it ships for, as flusso's
 *	  catalog says at the start of a pass (read then, or kept from an
 *	  earlier pass while it holds), and what a turn's steps came to.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SHIPPER_SHIP_CATALOG_H
#define FLUSSO_SHIPPER_SHIP_CATALOG_H

#include "datatype/timestamp.h"
#include "nodes/pg_list.h"
#include "ipc/shared.h"
#include "opensearch/server.h"
#include "store/catalog_opensearch_generation.h"
#include "util/pace.h"

struct DocumentQuery;
struct SourceIdentity;

/* A generation: its row of flusso.opensearch_generation, and its server. */
typedef struct ShipGeneration
{
	GenerationRow row;
	OpenSearchServer *server;	/* NULL: the server is gone */
} ShipGeneration;

/* An index the shipper has work for. */
typedef struct ShipIndex
{
	char	   *name;
	bool		live;			/* the index and its OpenSearch sink exist */
	Oid			owner;
	char	   *owner_name;
	char	   *on_error;		/* quarantine or stop */
	char	   *stopped;		/* why shipping stopped, or NULL */
	char	   *conflict;		/* why its alias is not its own, or NULL */
	bool		take_alias;		/* flusso_adopt(): take it over */
	OpenSearchServer *server;	/* NULL: the server is gone */
	char	   *server_name;
	bool		usable;			/* the owner has USAGE on the server */
	List	   *generations;	/* ShipGeneration, oldest first */
	char	   *mapping;		/* its flusso_mapping(), when one is to be
								 * created or remapped */
	struct DocumentQuery *query;	/* its build statement, once compiled */
	MemoryContext query_context;	/* where it is */
} ShipIndex;

/* What the shipper keeps of an index from turn to turn. */
typedef struct ShipRuntime
{
	char		name[NAMEDATALEN];	/* hash key */
	TimestampTz not_before;		/* backing off until then */
	int			failures;		/* in a row */
	int			items_cap;		/* a 413 halves it, a bulk that goes doubles it */
	TimestampTz checked_at;		/* when the served generation was checked */
	int64		settled;		/* the generation live_settings were put on */
	char	   *settled_settings;	/* which (TopMemoryContext), or NULL */
	TimestampTz settle_failed_at;	/* when putting them last failed, or 0 */
	int64		remap_refused;	/* the generation that refused the fields
								 * its index gained, or 0 */
	int64		emptying;		/* generation being emptied after a truncate */
	char	   *emptying_scroll;	/* the scroll it goes on with (TopMemoryContext) */
	BuildPace	pace;			/* what building its documents costs lately */
	/* the commits sessions wait for, and when the worker had them queued */
	XLogRecPtr	wait_lsn;		/* 0: none */
	TimestampTz wait_at;
} ShipRuntime;

/* A step that failed: why, and how long OpenSearch asked to wait. */
typedef struct ShipFailure
{
	char	   *message;		/* for flusso_status(): never a value */
	int			retry_after_s;	/* its Retry-After, or -1 */
} ShipFailure;

/*
 * What the steps of an index's turn came to.  The steps only say it; the
 * loop (shipper.c) records it once the turn ended, or raised: what the
 * pass read of the catalog is dropped if a step changed it, a bulk that
 * went through ends the back-off, then each failure, in the order they
 * happened, backs the index off and says why in flusso_status().  A
 * failure ends the turn, so none comes before a bulk that went through.
 */
typedef struct ShipStatus
{
	bool		went_through;	/* a bulk went through */
	List	   *failures;		/* ShipFailure */
	bool		conflict;		/* the index is in conflict over its alias */
	bool		reread;			/* a step changed flusso's catalog, or found
								 * it changed: the next pass reads it again */
} ShipStatus;

/*
 * A step failed; message is kept in the current memory context, which
 * must outlive the turn (not a transaction's).
 */
static inline void
ship_status_failed(ShipStatus *status, const char *message, int retry_after_s)
{
	ShipFailure *failure = palloc(sizeof(ShipFailure));

	failure->message = pstrdup(message);
	failure->retry_after_s = retry_after_s;
	status->failures = lappend(status->failures, failure);
}

/*
 * how often the served generation is checked in OpenSearch, and an index
 * in conflict over its alias looked at again
 */
#define SHIP_CHECK_MS 5000

/* how long one index ships bulk after bulk before the next index's turn */
#define SHIP_TURN_MS 1000

extern void ship_watch_start(void);
extern bool ship_load(DatabaseEntry *entry, List **indexes);
extern void ship_catalog_forget(void);
extern bool ship_catalog_holds(void);
extern const struct DocumentQuery *ship_build_query(ShipIndex *x);
extern const struct SourceIdentity *ship_identity(const char **owner_record);
extern bool ship_generation_active(const ShipGeneration *g);
extern void ship_record_error(const char *index, const char *message);
extern void ship_record_shipped(const char *index, int64 shipped);

#endif							/* FLUSSO_SHIPPER_SHIP_CATALOG_H */

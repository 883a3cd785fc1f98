/*-------------------------------------------------------------------------
 *
 * shipper.h
 *	  The shipper of a database: what it knows of each index it ships for,
 *	  as flusso's catalog says at the start of a pass (read then, or kept
 *	  from an earlier pass while it holds: ship_catalog.c), and the steps it
 *	  takes for one index in a turn.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SHIPPER_SHIPPER_H
#define FLUSSO_SHIPPER_SHIPPER_H

#include "datatype/timestamp.h"
#include "fmgr.h"
#include "nodes/pg_list.h"
#include "ipc/shared.h"
#include "opensearch/server.h"
#include "util/pace.h"

struct DocumentQuery;

/* A row of flusso.opensearch_generation, and what its steps send. */
typedef struct ShipGeneration
{
	int64		generation;
	char	   *index_name;
	char	   *alias;
	char	   *concrete;
	char	   *state;			/* seeding, seeded, served, retired */
	bool		created;		/* exists in OpenSearch */
	bool		keep;			/* retired, but left in OpenSearch */
	int64		seeded_version; /* -1: none */
	int64		truncate_version;	/* -1: none */
	bool		drained;		/* nothing queued up to seeded_version waits */
	int64		rejected;		/* documents rejected since it was created */
	int64		ranges_version; /* seeded by ranges, at it; -1: by the queue */
	bool		ranges_done;	/* every range shipped */
	bool		remap;			/* to map the fields its index gained */
	char	   *create_body;	/* settings and mappings, to create it */
	char	   *live_settings;	/* replicas and refresh, once seeded */
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
 * loop (shipper.c) records it once the turn ended, or raised: a bulk that
 * went through ends the back-off, then each failure, in the order they
 * happened, backs the index off and says why in flusso_status().  A
 * failure ends the turn, so none comes before a bulk that went through.
 */
typedef struct ShipStatus
{
	bool		went_through;	/* a bulk went through */
	List	   *failures;		/* ShipFailure */
	bool		conflict;		/* the index is in conflict over its alias */
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

/* how long a failed step waits before it is tried again, at most */
#define SHIP_BACKOFF_MAX_MS 60000

extern PGDLLEXPORT void flusso_shipper_main(Datum arg);

/* ship_catalog.c */
extern bool ship_load(DatabaseEntry *entry, List **indexes);
extern void ship_catalog_forget(void);
extern bool ship_catalog_holds(void);
extern const struct DocumentQuery *ship_build_query(ShipIndex *x);
extern void ship_record_error(const char *index, const char *message);
extern void ship_record_shipped(const char *index, int64 shipped);

extern const struct SourceIdentity *ship_identity(const char **owner_record);

/* ship_owner.c */
extern bool ship_generation_owned(ShipIndex *x, ShipGeneration *g, bool writing,
								  ShipStatus *status, bool *foreign);
extern bool ship_alias_may_move(ShipIndex *x, ShipGeneration *g, List *holders,
								bool moving, ShipStatus *status);
extern void ship_alias_taken(ShipIndex *x);
extern void ship_conflict_over(ShipIndex *x);

/* ship_stored.c */
extern char **ship_stored_docs(const ShipIndex *x, char **ids, int n);

/* generations.c */
extern bool ship_generations(ShipIndex *x, ShipRuntime *rt, ShipStatus *status);
extern bool ship_is_ready(ShipIndex *x);
extern bool ship_generation_active(const ShipGeneration *g);

/* ship_watch.c */
extern void ship_watch_start(void);
extern uint64 ship_watch_count(DatabaseEntry *entry);

/* ship.c */
extern bool ship_bulk(ShipIndex *x, ShipRuntime *rt, ShipStatus *status);
extern const char *ship_index_building(void);

/* ship_wait.c */
extern void ship_answer_waiters(ShipIndex *x, ShipRuntime *rt, DatabaseEntry *entry);
extern bool ship_waited_for(const char *index);

/* a turn that sessions wait on ends after this long, to tell them */
#define SHIP_WAITED_TURN_MS 20

#endif							/* FLUSSO_SHIPPER_SHIPPER_H */

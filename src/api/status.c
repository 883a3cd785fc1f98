/*-------------------------------------------------------------------------
 *
 * status.c
 *	  flusso_status(): one row per index of this database, from the catalog
 *	  (so that a new index shows at once), with its phase and the
 *	  database-wide figures of the worker from shared memory, and for an
 *	  index with an OpenSearch sink, its shipping: what is queued (and
 *	  since when) and rejected, from the catalog, and what the shipper
 *	  shipped and last failed at, from shared memory.
 *
 * The time to catch up (eta_seconds) is estimated from the recent rate
 * (util/rate.c): for the stream, the WAL bytes left to read over the
 * bytes the worker read and resolved per second since it was last caught
 * up (at most about a minute back), plus the documents it owes over the
 * documents it built per second last time, 0 while it is caught up; for a
 * seed, the root rows left over the
 * rows read per second over the last minute of the seed; for shipping
 * (ship_eta_seconds), the documents queued over the documents shipped per
 * second over the last minute.  Each assumes that no more work arrives
 * meanwhile; NULL when there is no recent rate to go by.
 *
 * A database that has no entry in shared memory while every entry is
 * taken has no worker and will get none: each index is in error, with
 * the setting to raise, and each call warns.  So is every index while
 * the worker cannot run (it failed since it last streamed: all
 * replication slots taken, say), with what it failed with; and an index
 * whose shipping stopped (its OpenSearch alias another database's, or
 * on_error 'stop'), with why.  A database that turns out to be a copy of
 * another one says so until its worker has taken it in
 * (source/source.c).
 *
 * flusso_admin members read everything; members of pg_monitor (the role
 * metrics are scraped as) read all but the error texts, which name tables,
 * columns, roles and servers and may quote a definition (a raw filter)
 * that only flusso_admin may read.
 *
 * On a subscriber, an index whose tables a subscription fills reads no
 * newer publisher change while that subscription is disabled or its apply
 * worker is not running: flusso_status() says so in last_error (when the
 * index has no error of its own), for each index of the database, and
 * flusso_upstream() shows each subscription and how far it applied.
 *
 * The library may be newer than the SQL objects (before ALTER EXTENSION
 * UPDATE): the shipping columns (0.3.0) and the estimates (0.4.0) are
 * filled only when the function declares them.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "replication/slot.h"
#include "utils/builtins.h"
#include "utils/pg_lsn.h"
#include "utils/timestamp.h"

#include "settings.h"
#include "store/catalog_index.h"
#include "store/catalog_sink.h"
#include "ipc/shared.h"
#include "source/source.h"
#include "source/upstream.h"
#include "util/access.h"

PG_FUNCTION_INFO_V1(flusso_status);
PG_FUNCTION_INFO_V1(flusso_upstream);

#define STATUS_COLUMNS 22
#define STATUS_COLUMNS_0_3 20
#define STATUS_COLUMNS_0_2 14

/* What the catalog says of an index's shipping. */
typedef struct Shipping
{
	bool		ships;
	int64		pending;
	double		oldest_seconds; /* -1: nothing pending */
	int64		rejected;
	char	   *stopped;		/* on_error 'stop', or a conflict over the alias */
} Shipping;

/* The shipping of every index with an OpenSearch sink, by name. */
static List *
load_shipping(List **names)
{
	List	   *shipping = NIL;
	CatalogUser saved;
	List	   *rows;
	ListCell   *lc;

	catalog_become_owner(&saved);
	rows = catalog_shipping_rows();
	catalog_restore_user(&saved);
	foreach(lc, rows)
	{
		ShippingRow *row = lfirst(lc);
		Shipping   *s = palloc0(sizeof(Shipping));

		*names = lappend(*names, row->index_name);
		s->ships = true;
		s->pending = row->pending;
		s->oldest_seconds = row->oldest_seconds;
		s->rejected = row->rejected;
		s->stopped = row->conflict ? row->conflict : row->stopped;
		shipping = lappend(shipping, s);
	}
	return shipping;
}

static Shipping *
shipping_of(List *names, List *shipping, const char *name)
{
	ListCell   *nc,
			   *sc;

	forboth(nc, names, sc, shipping)
	{
		if (strcmp(lfirst(nc), name) == 0)
			return lfirst(sc);
	}
	return NULL;
}

/* Is this database a copy its worker has not taken in yet (source.c)? */
static bool
copy_unclaimed(SourceIdentity *identity)
{
	CatalogUser saved;
	bool		known;

	catalog_become_owner(&saved);
	known = source_look(identity);
	catalog_restore_user(&saved);
	return known && identity->unclaimed != NULL;
}

/*
 * Why the documents miss the publisher's newer changes: the first
 * subscription filling flusso's tables that applies nothing now, or NULL.
 */
static char *
upstream_trouble(void)
{
	ListCell   *lc;

	foreach(lc, upstream_load())
	{
		Upstream   *u = lfirst(lc);
		char	   *problem = u->tables > 0 ? upstream_problem(u) : NULL;

		if (problem)
			return problem;
	}
	return NULL;
}

/* The slot's confirmed position, or InvalidXLogRecPtr without a slot. */
static XLogRecPtr
slot_confirmed(const char *slot_name)
{
	ReplicationSlot *slot;
	XLogRecPtr	confirmed = InvalidXLogRecPtr;

	LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
	slot = SearchNamedReplicationSlot(slot_name, false);
	if (slot)
	{
		SpinLockAcquire(&slot->mutex);
		confirmed = slot->data.confirmed_flush;
		SpinLockRelease(&slot->mutex);
	}
	LWLockRelease(ReplicationSlotControlLock);
	return confirmed;
}

/*
 * Seconds until the worker has applied the WAL flushed so far: the WAL it
 * has still to read and resolve, at the rate it resolved WAL since it was
 * last caught up, then the documents it owes, at the rate it built them
 * last time; 0 when it is caught up (it read all flushed WAL on its last
 * turn and owes nothing, and turns at least every naptime), -1 when
 * unknown.
 */
static double
stream_eta(const DatabaseEntry *db, XLogRecPtr confirmed, XLogRecPtr flushed,
		   TimestampTz now)
{
	double		eta = 0;

	if (XLogRecPtrIsInvalid(confirmed))
		return -1;
	if (flushed <= confirmed)
		return 0;
	if (db->worker_pid == 0)
		return -1;
	if (db->caught_up &&
		now - db->caught_up_at <= (int64) flusso_naptime * 1000 + USECS_PER_SEC)
		return 0;
	if (flushed > db->resolved_lsn)
	{
		double		rate = rate_per_second(&db->resolve_rate, now, db->resolved_lsn);

		if (rate <= 0)
			return -1;
		eta += (double) (flushed - db->resolved_lsn) / rate;
	}
	if (db->documents_owed > 0)
	{
		if (db->build_rate <= 0)
			return -1;
		eta += (double) db->documents_owed / db->build_rate;
	}
	return eta;
}

/*
 * How far behind an index is, in seconds: the age of the oldest change
 * whose document it has not written, its own (what it owes) or the
 * database's (read, not yet resolved into what each index owes).  An
 * index whose builds are dear falls behind alone: the others' lag stays
 * theirs.
 */
static double
index_lag(const DatabaseEntry *db, const IndexStatus *status, TimestampTz now)
{
	TimestampTz oldest = db->oldest_unresolved;

	if (status && status->owed > 0 && status->owed_since != 0 &&
		(oldest == 0 || status->owed_since < oldest))
		oldest = status->owed_since;
	return oldest == 0 ? 0.0 : Max((double) (now - oldest) / USECS_PER_SEC, 0.0);
}

/* Seconds until a seed has read its estimated rows; -1 when unknown. */
static double
seed_eta(const IndexStatus *status, TimestampTz now)
{
	double		rate = rate_per_second(&status->seed_rate, now, status->seed_done);

	if (rate <= 0 || status->seed_total <= status->seed_done)
		return -1;
	return (double) (status->seed_total - status->seed_done) / rate;
}

/*
 * An index's time to catch up: a live index's is the stream's; a seeding
 * index's the seed's, or the stream's if longer; none for an index that
 * is idle or in error.
 */
static double
index_eta(IndexPhase phase, const IndexStatus *status, double stream, TimestampTz now)
{
	double		seed;

	if (phase == PHASE_LIVE)
		return stream;
	if (phase != PHASE_SEEDING || status == NULL)
		return -1;
	seed = seed_eta(status, now);
	if (seed < 0 || stream < 0)
		return -1;
	return Max(seed, stream);
}

/* Seconds until the outbox is shipped, at the recent rate; -1 when unknown. */
static double
ship_eta(const Shipping *ship, const IndexStatus *status, TimestampTz now)
{
	double		rate;

	if (ship->stopped)
		return -1;
	if (ship->pending == 0)
		return 0;
	if (status == NULL)
		return -1;
	rate = rate_per_second(&status->ship_rate, now, status->shipped);
	return rate > 0 ? (double) ship->pending / rate : -1;
}

/* The estimates of 0.4.0: NULL when unknown. */
static void
fill_estimates(Datum *values, bool *nulls, double eta, const Shipping *ship,
			   const IndexStatus *status, TimestampTz now)
{
	double		shipping = ship ? ship_eta(ship, status, now) : -1;

	values[20] = Float8GetDatum(eta);
	nulls[20] = eta < 0;
	values[21] = Float8GetDatum(shipping);
	nulls[21] = shipping < 0;
}

/* The shipping columns: NULL for an index without an OpenSearch sink. */
static void
fill_shipping(Datum *values, bool *nulls, const Shipping *ship, const IndexStatus *status)
{
	for (int c = STATUS_COLUMNS_0_2; c < STATUS_COLUMNS_0_3; c++)
		nulls[c] = true;
	if (ship == NULL)
		return;
	values[14] = Int64GetDatum(ship->pending);
	nulls[14] = false;
	values[15] = Float8GetDatum(Max(ship->oldest_seconds, 0.0));
	nulls[15] = ship->oldest_seconds < 0;
	values[16] = Int64GetDatum(status ? status->shipped : 0);
	nulls[16] = false;
	values[17] = Int64GetDatum(ship->rejected);
	nulls[17] = false;
	if (ship->stopped)
		values[18] = CStringGetTextDatum(ship->stopped);
	else if (status && status->ship_error[0])
		values[18] = CStringGetTextDatum(status->ship_error);
	nulls[18] = ship->stopped == NULL && !(status && status->ship_error[0]);
	values[19] = TimestampTzGetDatum(status ? status->ship_error_at : 0);
	nulls[19] = status == NULL || status->ship_error_at == 0;
}

Datum
flusso_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *slot_name = psprintf(FLUSSO_SLOT_FORMAT, MyDatabaseId);
	XLogRecPtr	confirmed = slot_confirmed(slot_name);
	XLogRecPtr	flushed = GetFlushRecPtr(NULL);
	DatabaseEntry copy;
	bool		have_entry = false;
	IndexStatus *statuses = NULL;
	bool		refused = false;
	List	   *shipping_names = NIL;
	List	   *shipping = NIL;
	bool		ship_columns;
	bool		estimates;
	bool		error_texts = flusso_is_admin();
	double		stream;
	bool		worker_failing;
	SourceIdentity identity;
	TimestampTz now = GetCurrentTimestamp();
	char	   *upstream;
	ListCell   *lc;

	if (!error_texts && !flusso_is_monitor())
		flusso_require_admin();
	InitMaterializedSRF(fcinfo, 0);
	upstream = upstream_trouble();
	ship_columns = rsinfo->setDesc->natts >= STATUS_COLUMNS_0_3;
	estimates = rsinfo->setDesc->natts >= STATUS_COLUMNS;
	if (ship_columns)
		shipping = load_shipping(&shipping_names);

	memset(&copy, 0, sizeof(copy));
	if (flusso_shared)
	{
		DatabaseEntry *entry;

		LWLockAcquire(flusso_shared->lock, LW_SHARED);
		entry = shared_database(MyDatabaseId, false);
		if (entry)
		{
			memcpy(&copy, entry, sizeof(copy));
			statuses = shared_copy_index_statuses(entry);
			have_entry = true;
		}
		else
			refused = shared_databases_full();
		LWLockRelease(flusso_shared->lock);
	}
	stream = stream_eta(&copy, confirmed, flushed, now);
	if (refused)
	{
		/* every entry is another database's: no worker can run here */
		snprintf(copy.last_error, FLUSSO_ERROR_LEN,
				 "no flusso worker keeps this database up to date: other databases with flusso hold all the entries flusso.max_databases reserves (%d); raise flusso.max_databases and restart the server",
				 flusso_shared->ndatabases);
		copy.last_error_at = now;
		shared_warn_no_entry(NULL);
	}
	/* it failed since it last streamed: nothing is kept up to date */
	worker_failing = copy.failures > 0 && copy.exit_error[0] != '\0';
	if (copy_unclaimed(&identity))
	{
		snprintf(copy.last_error, FLUSSO_ERROR_LEN,
				 "this database is a copy of %s: its worker has not given it an identity of its own yet, and ships nothing to OpenSearch until it has",
				 identity.unclaimed);
		copy.last_error_at = now;
	}

	foreach(lc, catalog_index_names())
	{
		const char *name = lfirst(lc);
		IndexStatus *status = NULL;
		Shipping   *ship = shipping_of(shipping_names, shipping, name);
		Datum		values[STATUS_COLUMNS];
		bool		nulls[STATUS_COLUMNS];
		IndexPhase	phase;

		memset(nulls, 0, sizeof(nulls));
		for (int i = 0; have_entry && i < copy.nindexes; i++)
		{
			if (strcmp(statuses[i].name, name) == 0)
				status = &statuses[i];
		}

		values[0] = CStringGetTextDatum(name);
		/* without a worker, nothing is kept up to date */
		phase = (refused || worker_failing || (copy.no_worker_slot && copy.worker_pid == 0))
			? PHASE_ERROR : status ? status->phase : PHASE_IDLE;
		/* its shipping stopped: this index alone is in error */
		if (ship && ship->stopped)
			phase = PHASE_ERROR;
		values[1] = CStringGetTextDatum(phase_name(phase));
		values[2] = Int64GetDatum(status ? status->seed_done : 0);
		values[3] = Int64GetDatum(status ? status->seed_total : 0);
		values[4] = Int32GetDatum(copy.worker_pid);
		nulls[4] = copy.worker_pid == 0;
		values[5] = CStringGetTextDatum(slot_name);
		values[6] = LSNGetDatum(confirmed);
		nulls[6] = XLogRecPtrIsInvalid(confirmed);
		values[7] = Int64GetDatum(flushed > confirmed ? (int64) (flushed - confirmed) : 0);
		nulls[7] = XLogRecPtrIsInvalid(confirmed);
		values[8] = Float8GetDatum(index_lag(&copy, status, now));
		values[9] = Int64GetDatum(copy.changes_captured);
		values[10] = Int64GetDatum(copy.documents_written);
		values[11] = Int64GetDatum(copy.batches);
		if (status && status->error[0])
			values[12] = CStringGetTextDatum(status->error);
		else if (ship && ship->stopped)
			values[12] = CStringGetTextDatum(ship->stopped);
		else if (copy.last_error[0])
			values[12] = CStringGetTextDatum(copy.last_error);
		else if (upstream)
			values[12] = CStringGetTextDatum(upstream);
		else
			nulls[12] = true;
		values[13] = TimestampTzGetDatum(copy.last_error_at);
		nulls[13] = copy.last_error_at == 0;
		if (ship_columns)
			fill_shipping(values, nulls, ship, status);
		if (estimates)
			fill_estimates(values, nulls, index_eta(phase, status, stream, now),
						   ship, status, now);
		/* pg_monitor alone: the times of errors, not their texts */
		if (!error_texts)
			nulls[12] = true;
		if (!error_texts && ship_columns)
			nulls[18] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * flusso_upstream(): one row per subscription of this database, with the
 * tables of flusso's publication it fills, how far it applied the
 * publisher's changes, and why, when it applies none now, the documents
 * miss the newer ones.  Read as flusso_status() is.
 */
Datum
flusso_upstream(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ListCell   *lc;

	if (!flusso_is_admin() && !flusso_is_monitor())
		flusso_require_admin();
	InitMaterializedSRF(fcinfo, 0);
	foreach(lc, upstream_load())
	{
		Upstream   *u = lfirst(lc);
		char	   *problem = upstream_problem(u);
		Datum		values[9];
		bool		nulls[9];

		memset(nulls, 0, sizeof(nulls));
		values[0] = CStringGetTextDatum(u->name);
		values[1] = CStringGetTextDatum(upstream_state(u));
		values[2] = Int32GetDatum(u->tables);
		values[3] = Int32GetDatum(u->copying);
		values[4] = LSNGetDatum(u->applied);
		nulls[4] = XLogRecPtrIsInvalid(u->applied);
		values[5] = LSNGetDatum(u->confirmed);
		nulls[5] = XLogRecPtrIsInvalid(u->confirmed);
		values[6] = TimestampTzGetDatum(u->heard_at);
		nulls[6] = u->heard_at == 0;
		values[7] = Int64GetDatum(u->apply_errors);
		values[8] = problem ? CStringGetTextDatum(problem) : (Datum) 0;
		nulls[8] = problem == NULL;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

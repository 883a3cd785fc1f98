/*-------------------------------------------------------------------------
 *
 * upstream.c
 *	  The subscriptions that feed this database's tables from another
 *	  server, and how far each has applied the publisher's changes.
 *
 * When flusso runs on a subscriber (beside a managed PostgreSQL, which
 * cannot load it), an application commits on the publisher, and its
 * change reaches the documents in two hops: the subscription applies it
 * here, and flusso's worker decodes what the apply worker wrote, as any
 * other change.  A publisher position U has been applied here once
 *
 *	  - the subscription's replication origin has advanced to U or past it:
 *		a publisher transaction ending at or after U was committed here,
 *		and the apply worker commits in the publisher's commit order; or
 *	  - its apply worker, running, reports U or more as the latest position
 *		the publisher said it had sent everything before (latest_end_lsn):
 *		that is taken from keepalive messages alone, each handled after
 *		every message sent before it, so every publisher commit before U
 *		was committed here first.  An idle publisher advances it; the
 *		origin alone would stay at the end of its last transaction, short
 *		of a U taken after it.
 *
 * and no table the subscription copies into flusso's publication is still
 * being synchronized (its rows come from a copy and its own worker until
 * then).  The position received (received_lsn) would not do: it moves
 * when a commit arrives, before that commit is made here.
 *
 * Only what every PostgreSQL from 15 on shows is read: pg_subscription's
 * public columns, pg_subscription_rel, pg_stat_subscription and
 * pg_stat_subscription_stats, and the origin's progress from shared
 * memory; whoever may read flusso_status() may read these.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "replication/origin.h"
#include "utils/builtins.h"
#include "utils/pg_lsn.h"

#include "compat.h"
#include "settings.h"
#include "source/upstream.h"
#include "util/spi_run.h"

/*
 * The subscriptions of this database, with the tables each copies into
 * flusso's publication ($2) and how many of them are not synchronized
 * yet, and what their apply worker (not a table's, nor a parallel one)
 * last heard; by name.
 */
static const char *const upstream_sql =
"WITH fed AS ("
"  SELECT c.oid FROM pg_catalog.pg_publication_tables p"
"  JOIN pg_catalog.pg_namespace n ON n.nspname OPERATOR(pg_catalog.=) p.schemaname"
"  JOIN pg_catalog.pg_class c ON c.relnamespace OPERATOR(pg_catalog.=) n.oid"
"   AND c.relname OPERATOR(pg_catalog.=) p.tablename"
"  WHERE p.pubname OPERATOR(pg_catalog.=) $2)"
" SELECT s.oid, s.subname::pg_catalog.text, s.subenabled,"
"  w.pid, w.latest_end_lsn, w.last_msg_receipt_time,"
"  COALESCE(e.apply_error_count, 0),"
"  (SELECT pg_catalog.count(*)::pg_catalog.int4 FROM pg_catalog.pg_subscription_rel r"
"   WHERE r.srsubid OPERATOR(pg_catalog.=) s.oid AND r.srrelid IN (SELECT oid FROM fed)),"
"  (SELECT pg_catalog.count(*)::pg_catalog.int4 FROM pg_catalog.pg_subscription_rel r"
"   WHERE r.srsubid OPERATOR(pg_catalog.=) s.oid AND r.srrelid IN (SELECT oid FROM fed)"
"   AND r.srsubstate OPERATOR(pg_catalog.<>) ALL ('{r,s}'::pg_catalog.\"char\"[]))"
" FROM pg_catalog.pg_subscription s"
" LEFT JOIN pg_catalog.pg_stat_subscription w ON w.subid OPERATOR(pg_catalog.=) s.oid"
"  AND w.relid IS NULL" COMPAT_APPLY_LEADER_QUAL
" LEFT JOIN pg_catalog.pg_stat_subscription_stats e ON e.subid OPERATOR(pg_catalog.=) s.oid"
" WHERE s.subdbid OPERATOR(pg_catalog.=) $1"
" ORDER BY s.subname";

/* The end of the last publisher commit the subscription made here. */
static XLogRecPtr
origin_progress(Oid subid)
{
	char		origin[NAMEDATALEN];
	RepOriginId id;

	/* the name CREATE SUBSCRIPTION gives its origin */
	snprintf(origin, sizeof(origin), "pg_%u", subid);
	id = replorigin_by_name(origin, true);
	if (id == InvalidRepOriginId)
		return InvalidXLogRecPtr;
	return replorigin_get_progress(id, false);
}

/* A reader: one subscription, appended to the List ** arg. */
static void
read_upstream(HeapTuple tuple, TupleDesc desc, void *arg)
{
	List	  **upstreams = arg;
	Upstream   *u = palloc0(sizeof(Upstream));
	bool		isnull;
	Datum		d;

	u->subid = DatumGetObjectId(SPI_getbinval(tuple, desc, 1, &isnull));
	u->name = TextDatumGetCString(SPI_getbinval(tuple, desc, 2, &isnull));
	u->enabled = DatumGetBool(SPI_getbinval(tuple, desc, 3, &isnull));
	d = SPI_getbinval(tuple, desc, 4, &isnull);
	u->pid = isnull ? 0 : DatumGetInt32(d);
	d = SPI_getbinval(tuple, desc, 5, &isnull);
	u->confirmed = (isnull || u->pid == 0) ? InvalidXLogRecPtr : DatumGetLSN(d);
	d = SPI_getbinval(tuple, desc, 6, &isnull);
	u->heard_at = (isnull || u->pid == 0) ? 0 : DatumGetTimestampTz(d);
	u->apply_errors = DatumGetInt64(SPI_getbinval(tuple, desc, 7, &isnull));
	u->tables = DatumGetInt32(SPI_getbinval(tuple, desc, 8, &isnull));
	u->copying = DatumGetInt32(SPI_getbinval(tuple, desc, 9, &isnull));
	u->applied = origin_progress(u->subid);
	*upstreams = lappend(*upstreams, u);
}

/*
 * Every subscription of this database, in the caller's memory context; a
 * fresh snapshot each call (under READ COMMITTED), so that a wait sees a
 * subscription disabled meanwhile.
 */
List *
upstream_load(void)
{
	Oid			types[2] = {OIDOID, TEXTOID};
	Datum		values[2] = {ObjectIdGetDatum(MyDatabaseId),
	CStringGetTextDatum(flusso_publication)};
	List	   *upstreams = NIL;

	(void) spi_read(upstream_sql, 2, types, values, false, 0, read_upstream, &upstreams);
	return upstreams;
}

/*
 * The subscription a wait is for: the one named, or, with no name, the
 * only subscription of this database that copies tables of flusso's
 * publication.
 */
Upstream *
upstream_find(const char *name)
{
	List	   *upstreams = upstream_load();
	Upstream   *found = NULL;
	int			feeding = 0;
	ListCell   *lc;

	foreach(lc, upstreams)
	{
		Upstream   *u = lfirst(lc);

		if (name != NULL && strcmp(u->name, name) == 0)
			return u;
		if (name == NULL && u->tables > 0)
		{
			found = u;
			feeding++;
		}
	}
	if (name != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("subscription \"%s\" does not exist in this database", name)));
	if (feeding == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("no subscription of this database copies a table of publication \"%s\"",
						flusso_publication),
				 errdetail("upstream_lsn is a position on a publisher whose changes a subscription applies here."),
				 errhint("Create the subscription, or call flusso_wait() without upstream_lsn.")));
	if (feeding > 1)
		ereport(ERROR,
				(errcode(ERRCODE_AMBIGUOUS_PARAMETER),
				 errmsg("%d subscriptions of this database copy tables of publication \"%s\"",
						feeding, flusso_publication),
				 errhint("Name the one whose publisher upstream_lsn is a position of: subscription => 'name'.")));
	return found;
}

/* Has every publisher change before lsn been applied here (see above)? */
bool
upstream_reached(const Upstream *upstream, XLogRecPtr lsn)
{
	if (upstream->copying > 0)
		return false;
	if (!XLogRecPtrIsInvalid(upstream->applied) && upstream->applied >= lsn)
		return true;
	return upstream->pid != 0 && upstream->confirmed >= lsn;
}

/* In a word: applying, copying (tables), stopped (no worker), disabled. */
const char *
upstream_state(const Upstream *upstream)
{
	if (!upstream->enabled)
		return "disabled";
	if (upstream->pid == 0)
		return "stopped";
	if (upstream->copying > 0)
		return "copying";
	return "applying";
}

/*
 * Why the documents hold none of the publisher's newer changes, or NULL
 * while the subscription applies them (or copies its tables).
 */
char *
upstream_problem(const Upstream *upstream)
{
	char		applied[32];

	if (upstream->enabled && upstream->pid != 0)
		return NULL;
	if (XLogRecPtrIsInvalid(upstream->applied))
		strlcpy(applied, "none yet", sizeof(applied));
	else
		snprintf(applied, sizeof(applied), "%X/%X", LSN_FORMAT_ARGS(upstream->applied));
	if (!upstream->enabled)
		return psprintf("subscription \"%s\" is disabled: the documents hold the publisher's changes up to the last one it applied (publisher position %s), none after",
						upstream->name, applied);
	return psprintf("subscription \"%s\" applies nothing: its apply worker is not running (%lld apply errors so far; the server log says why), and the documents hold the publisher's changes up to the last one it applied (publisher position %s), none after",
					upstream->name, (long long) upstream->apply_errors, applied);
}

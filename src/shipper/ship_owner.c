/*-------------------------------------------------------------------------
 *
 * ship_owner.c
 *	  Whose an OpenSearch index is: the shipper writes only into indexes
 *	  of this database's, and moves an alias only away from indexes that
 *	  are its own or nobody's.
 *
 * Every index flusso creates records the identity of its database in its
 * _meta (source/source.c); one made before 0.7.0 records none, and the
 * shipper records it the first time it checks a generation the catalog
 * names.  So:
 *
 *	  - a generation is checked once per shipper before anything is
 *		written into it or deleted from it: another source's is never
 *		touched, and its index stops in conflict;
 *	  - before an alias is moved (a generation served, an alias put back
 *		on the served generation) and before a generation is created,
 *		the indexes the alias serves are looked at: one of another
 *		source's (the database this one was copied from, say), or one
 *		with this database's identity that the catalog does not know (one
 *		flusso_drop_index() kept, or a physical copy of this database's
 *		running elsewhere), stops the
 *		index in conflict instead of taking the alias from it, so that
 *		two databases never fight over an alias and readers never see
 *		the other's documents.  An index recording no owner (made by
 *		hand, or by flusso before 0.7.0) is moved away from, as before.
 *
 * A conflict is recorded in flusso.sink (flusso_status() shows the index
 * in phase error with the reason, flusso_check() too), nothing is shipped
 * for the index meanwhile, and it is looked at again every SHIP_CHECK_MS:
 * it ends once the server has an index_prefix of its own (generations not
 * created yet take the new names: generations.c) or flusso_adopt() asked
 * that the alias be taken over, from whichever source serves it.
 *
 * Before 0.7.0's catalog there is no identity, and nothing is checked.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "util/xact.h"
#include "opensearch/api.h"
#include "shipper/ship_owner.h"
#include "source/source.h"
#include "store/catalog_sink.h"

/* how long remote names may be in a message */
#define OWNER_TEXT_MAX 64

typedef enum OwnerKind
{
	OWNER_NONE,					/* no record: by hand, or before 0.7.0 */
	OWNER_THIS,					/* this database */
	OWNER_OTHER					/* another source */
} OwnerKind;

/* The generations found this database's since the shipper started. */
static List *verified = NIL;

static OwnerKind
owner_kind(const OwnerRecord *owner)
{
	const SourceIdentity *me = ship_identity(NULL);

	if (owner == NULL || owner->source == NULL)
		return OWNER_NONE;
	return strcmp(owner->source, me->id) == 0 ? OWNER_THIS : OWNER_OTHER;
}

/*
 * A name OpenSearch gave back, fit for a message: at most OWNER_TEXT_MAX
 * bytes, control characters and quotes replaced.
 */
static char *
remote_text(const char *text)
{
	char	   *safe;

	if (text == NULL)
		return pstrdup("?");
	safe = pnstrdup(text, OWNER_TEXT_MAX);
	for (char *c = safe; *c; c++)
	{
		if ((unsigned char) *c < 0x20 || *c == 0x7f || *c == '"' || *c == '\\')
			*c = '?';
	}
	return safe;
}

/* The database an owner record names, in words. */
static char *
describe_owner(const OwnerRecord *owner)
{
	const SourceIdentity *me = ship_identity(NULL);
	char	   *database_oid = psprintf("%u", me->database_oid);

	if (owner->system_identifier && owner->database_oid &&
		strcmp(owner->system_identifier, me->system_identifier) == 0 &&
		strcmp(owner->database_oid, database_oid) == 0)
		return pstrdup("an earlier installation of flusso in this database");
	return source_describe(remote_text(owner->system_identifier),
						   remote_text(owner->database_oid), remote_text(owner->database));
}

static char *
describe_me(void)
{
	const SourceIdentity *me = ship_identity(NULL);

	return source_describe(me->system_identifier, psprintf("%u", me->database_oid),
						   me->database_name);
}

/*
 * x stops in conflict, for message: recorded in flusso.sink (unless it
 * says so already), said in flusso_status(), and looked at again later.
 */
static void
conflict(ShipIndex *x, ShipStatus *status, const char *message)
{
	if (x->conflict == NULL || strcmp(x->conflict, message) != 0)
	{
		ereport(LOG, (errmsg("flusso shipper: index \"%s\": %s", x->name, message)));
		if (xact_begin(true, NULL, 0))
		{
			catalog_set_conflict(x->name, message);
			status->reread = true;
			xact_commit();
		}
	}
	ship_record_error(x->name, message);
	status->conflict = true;
}

/* What a turn of x came to without a conflict: any conflict of x is over. */
void
ship_conflict_over(ShipIndex *x, ShipStatus *status)
{
	if (x->conflict == NULL)
		return;
	if (xact_begin(true, NULL, 0))
	{
		catalog_set_conflict(x->name, NULL);
		status->reread = true;
		xact_commit();
	}
	ereport(LOG, (errmsg("flusso shipper: index \"%s\": the conflict over its OpenSearch alias is over", x->name)));
	x->conflict = NULL;
}

static bool
request_failed(ShipStatus *status, const HttpRequest *req)
{
	ship_status_failed(status, http_failure(req), req->retry_after);
	return false;
}

static bool
is_verified(const char *concrete)
{
	ListCell   *lc;

	foreach(lc, verified)
	{
		if (strcmp(lfirst(lc), concrete) == 0)
			return true;
	}
	return false;
}

static void
remember_verified(const char *concrete)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	verified = lappend(verified, pstrdup(concrete));
	MemoryContextSwitchTo(old);
}

/*
 * Is g's OpenSearch index this database's, to write into (writing) or
 * delete?  Looked at once per shipper: one that records no owner was made
 * before 0.7.0, and is marked this database's now; one that is gone is
 * left to what notices that (the served check, a _bulk).  False when the
 * request failed (*status says), or when the index is another source's
 * (*foreign; and if writing, x is in conflict).
 */
bool
ship_generation_owned(ShipIndex *x, ShipGeneration *g, bool writing, ShipStatus *status,
					  bool *foreign)
{
	const char *owner_record;
	const SourceIdentity *me = ship_identity(&owner_record);
	HttpRequest *req;
	List	   *owners;
	OwnerRecord *owner;

	*foreign = false;
	if (me->id == NULL || !g->row.created || g->server == NULL || is_verified(g->row.concrete))
		return true;
	owners = os_index_owners(g->server, list_make1(g->row.concrete), &req);
	if (req->status == 404)
		return true;
	if (!os_succeeded(req, 0))
		return request_failed(status, req);
	owner = linitial(owners);
	switch (owner_kind(owner))
	{
		case OWNER_THIS:
			break;
		case OWNER_NONE:
			if (!os_succeeded(req = os_put_owner(g->server, g->row.concrete, owner_record), 0))
				return request_failed(status, req);
			ereport(LOG,
					(errmsg("flusso shipper: OpenSearch index \"%s\" of index \"%s\" now records this database as its owner",
							g->row.concrete, x->name)));
			break;
		case OWNER_OTHER:
			*foreign = true;
			if (writing)
				conflict(x, status,
						 psprintf("OpenSearch index \"%s\", a generation of this index in the catalog, is an index of %s: nothing is written into it or deleted from it; call flusso_resnapshot('%s') to seed one of this database's own",
								  g->row.concrete, describe_owner(owner), x->name));
			return false;
	}
	remember_verified(g->row.concrete);
	return true;
}

/* Is index a generation of x in the catalog? */
static bool
known_generation(ShipIndex *x, const char *index)
{
	ListCell   *lc;

	foreach(lc, x->generations)
	{
		if (strcmp(((ShipGeneration *) lfirst(lc))->row.concrete, index) == 0)
			return true;
	}
	return false;
}

/* What the operator may do about a conflict over x's alias on g's server. */
static char *
remedies(ShipIndex *x, ShipGeneration *g)
{
	return psprintf("give server \"%s\" an index_prefix of its own (ALTER SERVER %s OPTIONS (%s index_prefix '...')), or call flusso_adopt('%s') if this database is to take the alias over",
					g->server->name, g->server->name,
					g->server->index_prefix && g->server->index_prefix[0] ? "SET" : "ADD",
					x->name);
}

/*
 * May g's alias move away from holders (the indexes it serves now) to g,
 * now (moving) or once g is seeded?  Generations of x may be moved from,
 * and indexes that record no owner; not, unless flusso_adopt() asked to
 * take the alias over, an index of another source, nor one of this
 * database's identity that the catalog does not know.  False when the
 * turn ends: the request failed (*status says), or x is in conflict.
 */
bool
ship_alias_may_move(ShipIndex *x, ShipGeneration *g, List *holders, bool moving,
					ShipStatus *status)
{
	const SourceIdentity *me = ship_identity(NULL);
	List	   *unknown = NIL;
	List	   *owners;
	HttpRequest *req;
	ListCell   *lc;

	if (me->id == NULL)
		return true;
	foreach(lc, holders)
	{
		if (!known_generation(x, lfirst(lc)))
			unknown = lappend(unknown, lfirst(lc));
	}
	if (unknown == NIL)
		return true;
	owners = os_index_owners(g->server, unknown, &req);
	if (!os_succeeded(req, 0))
		return request_failed(status, req);
	foreach(lc, owners)
	{
		OwnerRecord *owner = lfirst(lc);
		OwnerKind	kind = owner_kind(owner);

		if (kind == OWNER_NONE)
			continue;
		if (x->take_alias)
		{
			if (moving)
				ereport(LOG,
						(errmsg("flusso shipper: index \"%s\" takes OpenSearch alias \"%s\" over from \"%s\", an index of %s, as flusso_adopt() asked; that index is left as it is",
								x->name, g->row.alias, owner->index,
								kind == OWNER_THIS ? "this database's identity" : describe_owner(owner))));
			continue;
		}
		if (kind == OWNER_OTHER)
			conflict(x, status,
					 psprintf("OpenSearch alias \"%s\" serves \"%s\", an index of %s, not of this %s: flusso writes only into OpenSearch indexes of its own database, and does not take the alias; %s",
							  g->row.alias, owner->index, describe_owner(owner), describe_me(),
							  remedies(x, g)));
		else
			conflict(x, status,
					 psprintf("OpenSearch alias \"%s\" serves \"%s\", an index made with this database's identity that its catalog does not know: one that flusso_drop_index(keep_opensearch => true) left, or one made by another server running as this database (a restored base backup, a cloned volume, a standby promoted while this one kept running), which must then stop shipping there; %s",
							  g->row.alias, owner->index, remedies(x, g)));
		return false;
	}
	return true;
}

/* The alias of x moved as flusso_adopt() asked: that is done. */
void
ship_alias_taken(ShipIndex *x, ShipStatus *status)
{
	if (!x->take_alias)
		return;
	if (xact_begin(true, NULL, 0))
	{
		(void) catalog_take_alias(x->name, false);
		status->reread = true;
		xact_commit();
	}
	x->take_alias = false;
}

/*-------------------------------------------------------------------------
 *
 * hooks.c
 *	  The drop and utility hooks: DROP EXTENSION has the worker drop its
 *	  slot and stop (at commit, ipc/requests.c), a dropped or altered
 *	  documents table is followed by its index (hooks/follow.c), a
 *	  partition attached, detached or dropped has the indexes reading its
 *	  table seeded again (partitions.c), so does DDL that changes what
 *	  rows read as or makes a table unlogged (altered.c), DROP DATABASE
 *	  has the worker let go of its slot at once, and CREATE DATABASE has
 *	  the launcher look at the new database (a copy of one with flusso
 *	  must be taken in at once: source/source.c).
 *
 * DROP DATABASE cannot wait for commit: it
 * refuses while a logical slot of the database is active, and it checks
 * that before it could commit.  So the drop hook asks the worker to release
 * its slot and exit at once, terminates it if it is busy (in a long
 * statement, waiting for a consistent point or for a lock), and waits until
 * the slot is free; the slot itself stays, and DROP DATABASE removes it
 * with the database.  Should the drop fail anyway, the launcher starts the
 * worker again and nothing was lost.
 *
 * CREATE DATABASE ... TEMPLATE refuses to copy a database anyone is
 * connected to, and flusso's worker and shipper are: they step out the
 * same way for the statement, and the launcher starts them again as soon
 * as it ended.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_database.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "replication/slot.h"
#include "storage/spin.h"
#include "tcop/utility.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "settings.h"
#include "hooks/follow.h"
#include "hooks/altered.h"
#include "hooks/partitions.h"
#include "ipc/requests.h"
#include "ipc/shared.h"
#include "worker/worker.h"

/* how long DROP DATABASE waits for the worker to let go of its slot */
#define DROP_DATABASE_WAIT_MS 10000
/* how long a busy worker has to notice before it is terminated */
#define DROP_DATABASE_GRACE_MS 500
/* and how long the launcher then leaves the database alone */
#define DROP_DATABASE_HOLD_MS 30000

static object_access_hook_type prev_object_access_hook = NULL;
static ProcessUtility_hook_type prev_process_utility_hook = NULL;

/*
 * flusso_register_database(), called by the install script: CREATE
 * EXTENSION has the launcher look at the database at commit, and again now
 * and then, since a restore loads definitions without calling a function.
 */
PG_FUNCTION_INFO_V1(flusso_register_database);

Datum
flusso_register_database(PG_FUNCTION_ARGS)
{
	request_probe_at_commit();
	PG_RETURN_VOID();
}

/* Is the slot of database dboid held by a process? */
static bool
slot_active(Oid dboid)
{
	char		name[NAMEDATALEN];
	ReplicationSlot *slot;
	bool		active = false;

	snprintf(name, sizeof(name), FLUSSO_SLOT_FORMAT, dboid);
	LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
	slot = SearchNamedReplicationSlot(name, false);
	if (slot)
	{
		SpinLockAcquire(&slot->mutex);
		active = slot->active_pid != 0;
		SpinLockRelease(&slot->mutex);
	}
	LWLockRelease(ReplicationSlotControlLock);
	return active;
}

/*
 * DROP DATABASE: have the worker let go of the slot now, and wait until it
 * has.  A worker between batches sees the request at once; one busy in a
 * long statement, waiting for a consistent point or for a lock is
 * terminated after a moment, as DROP DATABASE WITH (FORCE) would
 * terminate a backend, and releases the slot as it exits.  The shipper,
 * which holds nothing that must be released, is terminated at once.
 */
static void
release_database(Oid dboid)
{
	DatabaseEntry *entry;
	Latch	   *latch = NULL;
	pid_t		shipper = 0;
	TimestampTz start = GetCurrentTimestamp();
	TimestampTz deadline;
	bool		terminated = false;

	if (flusso_shared == NULL)
		return;
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry = shared_database(dboid, false);
	if (entry)
	{
		entry->stop_requested = true;
		entry->hold_until = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
														DROP_DATABASE_HOLD_MS);
		entry->shipper_hold_until = entry->hold_until;
		latch = entry->worker_latch;
		shipper = entry->shipper_pid;
	}
	LWLockRelease(flusso_shared->lock);
	if (entry == NULL)
		return;
	if (latch)
		SetLatch(latch);
	/* the shipper holds no slot: it stops at once */
	if (shipper != 0)
		(void) kill(shipper, SIGTERM);

	deadline = TimestampTzPlusMilliseconds(start, DROP_DATABASE_WAIT_MS);
	for (;;)
	{
		pid_t		pid;
		TimestampTz now = GetCurrentTimestamp();

		LWLockAcquire(flusso_shared->lock, LW_SHARED);
		pid = entry->dboid == dboid ? entry->worker_pid : 0;
		shipper = entry->dboid == dboid ? entry->shipper_pid : 0;
		LWLockRelease(flusso_shared->lock);
		/* the worker forgets its pid before it releases the slot */
		if ((pid == 0 && shipper == 0 && !slot_active(dboid)) || now >= deadline)
			break;
		if (pid != 0 && !terminated &&
			TimestampDifferenceExceeds(start, now, DROP_DATABASE_GRACE_MS))
		{
			(void) kill(pid, SIGTERM);
			terminated = true;
		}
		CHECK_FOR_INTERRUPTS();
		pg_usleep(10000L);
	}
}

/*
 * The statement that had flusso's processes release database dboid ended:
 * the launcher may start them again at once.
 */
static void
resume_database(Oid dboid)
{
	DatabaseEntry *entry;

	if (flusso_shared == NULL)
		return;
	LWLockAcquire(flusso_shared->lock, LW_EXCLUSIVE);
	entry = shared_database(dboid, false);
	if (entry)
	{
		entry->hold_until = 0;
		entry->shipper_hold_until = 0;
	}
	LWLockRelease(flusso_shared->lock);
	if (entry)
		shared_wake_launcher();
}

/* The database CREATE DATABASE copies when it names a TEMPLATE, or InvalidOid. */
static Oid
template_of(CreatedbStmt *stmt)
{
	ListCell   *lc;

	foreach(lc, stmt->options)
	{
		DefElem    *option = lfirst(lc);

		if (strcmp(option->defname, "template") == 0 && option->arg != NULL)
			return get_database_oid(defGetString(option), true);
	}
	return InvalidOid;
}

static void
object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (classId == RelationRelationId && subId == 0 &&
		(access == OAT_DROP || access == OAT_POST_ALTER))
		index_note_docs_table(access == OAT_DROP, objectId);
	if (classId == DatabaseRelationId && access == OAT_POST_CREATE)
		request_listing_at_commit();
	if (access != OAT_DROP)
		return;
	if (classId == RelationRelationId && subId == 0)
		partitions_note_drop(objectId);
	if (classId == ExtensionRelationId && objectId == get_extension_oid("flusso", true))
		request_worker_at_commit(false);
	else if (classId == DatabaseRelationId)
		release_database(objectId);
}

/*
 * After ALTER TABLE ... ATTACH or DETACH PARTITION, and DDL that changes
 * values or logging without a row change, the indexes follow.  During
 * CREATE DATABASE ... TEMPLATE, flusso's processes in the template are
 * out of the way.
 */
static void
process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
				ProcessUtilityContext context, ParamListInfo params,
				QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *stmt = pstmt->utilityStmt;
	List	   *retyped = altered_before_statement(stmt);
	Oid			template = IsA(stmt, CreatedbStmt) ? template_of((CreatedbStmt *) stmt) : InvalidOid;

	if (OidIsValid(template))
		release_database(template);
	PG_TRY();
	{
		if (prev_process_utility_hook)
			prev_process_utility_hook(pstmt, queryString, readOnlyTree, context, params,
									  queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
									queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		if (OidIsValid(template))
			resume_database(template);
	}
	PG_END_TRY();
	if (IsA(stmt, AlterTableStmt))
		partitions_note_statement((AlterTableStmt *) stmt);
	altered_note_statement(stmt, retyped);
}

void
worker_install_hooks(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = object_access;
	prev_process_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = process_utility;
}

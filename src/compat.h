/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Shims over the differences between the PostgreSQL majors flusso
 *	  builds against, for backend code: 15, 16, 17 and 18, each built and
 *	  tested by make test.  No other file tests PG_VERSION_NUM but
 *	  schema/jsonapi_compat.h, the frontend-safe shims of the schema
 *	  reader, which depends on nothing else in the tree.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_COMPAT_H
#define FLUSSO_COMPAT_H

#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_publication.h"
#include "storage/lock.h"
#include "utils/acl.h"

/* 16 moved the varlena macros (VARDATA_ANY, ...) out of postgres.h */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* 16 folded the per-catalog ownership and ACL checks into object_* calls */
#if PG_VERSION_NUM >= 160000
#define compat_owns_relation(relid, role) \
	object_ownercheck(RelationRelationId, (relid), (role))
#define compat_owns_publication(pubid, role) \
	object_ownercheck(PublicationRelationId, (pubid), (role))
#define compat_database_aclcheck(dbid, role, mode) \
	object_aclcheck(DatabaseRelationId, (dbid), (role), (mode))
#define compat_namespace_aclcheck(nspid, role, mode) \
	object_aclcheck(NamespaceRelationId, (nspid), (role), (mode))
#define compat_foreign_server_aclcheck(srvid, role, mode) \
	object_aclcheck(ForeignServerRelationId, (srvid), (role), (mode))
#else
#define compat_owns_relation(relid, role) pg_class_ownercheck((relid), (role))
#define compat_owns_publication(pubid, role) pg_publication_ownercheck((pubid), (role))
#define compat_database_aclcheck(dbid, role, mode) \
	pg_database_aclcheck((dbid), (role), (mode))
#define compat_namespace_aclcheck(nspid, role, mode) \
	pg_namespace_aclcheck((nspid), (role), (mode))
#define compat_foreign_server_aclcheck(srvid, role, mode) \
	pg_foreign_server_aclcheck((srvid), (role), (mode))
#endif

/* 17 gave wait event sets a resource owner instead of a memory context */
#if PG_VERSION_NUM >= 170000
#define compat_create_wait_event_set(nevents) \
	CreateWaitEventSet(CurrentResourceOwner, (nevents))
#else
#define compat_create_wait_event_set(nevents) \
	CreateWaitEventSet(CurrentMemoryContext, (nevents))
#endif

/* 17 hands the output plugin HeapTuples instead of ReorderBufferTupleBufs */
#if PG_VERSION_NUM >= 170000
#define compat_change_tuple(buf) (buf)
#else
#define compat_change_tuple(buf) (&(buf)->tuple)
#endif

/* 16 records why a slot was invalidated; 15 only when */
#if PG_VERSION_NUM >= 160000
#define compat_slot_invalidated(slot) ((slot)->data.invalidated != RS_INVAL_NONE)
#else
#define compat_slot_invalidated(slot) \
	(!XLogRecPtrIsInvalid((slot)->data.invalidated_at) && \
	 XLogRecPtrIsInvalid((slot)->data.restart_lsn))
#endif

/*
 * 17 made logical slots failover slots on request (synced to standbys that
 * sync_replication_slots) and marks the synced copies, and a failover
 * slot's changes may be held back until the standbys named in
 * synchronized_standby_slots have them; 15 and 16 have none of it, so
 * failover is ignored there and nothing waits.
 */
#if PG_VERSION_NUM >= 170000
#define compat_slot_create_ephemeral(name, failover) \
	ReplicationSlotCreate((name), true, RS_EPHEMERAL, false, (failover), false)
#define compat_slot_is_failover(slot) ((slot)->data.failover)
#define compat_standbys_confirmed(lsn) \
	(!MyReplicationSlot->data.failover || StandbySlotsHaveCaughtup((lsn), DEBUG1))
#define COMPAT_HAS_FAILOVER_SLOTS true
#else
#define compat_slot_create_ephemeral(name, failover) \
	ReplicationSlotCreate((name), true, RS_EPHEMERAL, false)
#define compat_slot_is_failover(slot) false
#define compat_standbys_confirmed(lsn) true
#define COMPAT_HAS_FAILOVER_SLOTS false
#endif

/* 18 asks whether acquiring an invalidated slot is an error: it is for us */
#if PG_VERSION_NUM >= 180000
#define compat_slot_acquire(name) ReplicationSlotAcquire((name), true, true)
#else
#define compat_slot_acquire(name) ReplicationSlotAcquire((name), true)
#endif

/* 18 can return a deferrable primary key; flusso wants the immediate one, as before */
#if PG_VERSION_NUM >= 180000
#define compat_primary_key_index(rel) RelationGetPrimaryKeyIndex((rel), false)
#else
#define compat_primary_key_index(rel) RelationGetPrimaryKeyIndex(rel)
#endif

/*
 * 18 has virtual generated columns, whose value no tuple holds: a row
 * version says nothing of whether it changed
 */
#if PG_VERSION_NUM >= 180000
#define compat_attr_is_virtual(attr) ((attr)->attgenerated == ATTRIBUTE_GENERATED_VIRTUAL)
#else
#define compat_attr_is_virtual(attr) false
#endif

/* 18's base64 routines take and give bytes (uint8), not chars */
#if PG_VERSION_NUM >= 180000
#define compat_b64_encode(src, len, dst, dstlen) \
	pg_b64_encode((const uint8 *) (src), (len), (dst), (dstlen))
#define compat_b64_decode(src, len, dst, dstlen) \
	pg_b64_decode((src), (len), (uint8 *) (dst), (dstlen))
#else
#define compat_b64_encode(src, len, dst, dstlen) pg_b64_encode((src), (len), (dst), (dstlen))
#define compat_b64_decode(src, len, dst, dstlen) pg_b64_decode((src), (len), (dst), (dstlen))
#endif

/* 17 has the intervals infinity and -infinity */
#if PG_VERSION_NUM >= 170000
#define compat_interval_is_finite(i) (!INTERVAL_NOT_FINITE(i))
#else
#define compat_interval_is_finite(i) true
#endif

/* 18 replaced the postfix pg_attribute_noreturn() by the prefix pg_noreturn */
/* Does this backend hold a lock on tag in mode or a stronger one? (17: orstronger) */
#if PG_VERSION_NUM >= 170000
#define compat_lock_held_at_least(tag, mode) LockHeldByMe((tag), (mode), true)
#else
static inline bool
compat_lock_held_at_least(const LOCKTAG *tag, LOCKMODE mode)
{
	for (LOCKMODE m = mode; m <= MaxLockMode; m++)
	{
		if (LockHeldByMe(tag, m))
			return true;
	}
	return false;
}
#endif

/*
 * 16 lists parallel apply workers in pg_stat_subscription beside the
 * subscription's apply worker, with relid NULL too: a qualifier for the
 * latter alone (alias w)
 */
#if PG_VERSION_NUM >= 160000
#define COMPAT_APPLY_LEADER_QUAL " AND w.leader_pid IS NULL"
#else
#define COMPAT_APPLY_LEADER_QUAL ""
#endif

#if PG_VERSION_NUM < 180000 && !defined(pg_noreturn)
#define pg_noreturn pg_attribute_noreturn()
#endif

#endif							/* FLUSSO_COMPAT_H */

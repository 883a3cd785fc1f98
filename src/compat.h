/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Shims over the differences between the PostgreSQL versions flusso
 *	  builds against.  PostgreSQL 15 is tested; 16 to 18 are guarded here so
 *	  that they compile.  No other file tests PG_VERSION_NUM.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_COMPAT_H
#define FLUSSO_COMPAT_H

#include "common/jsonapi.h"

/* jsonapi semantic actions return an error code from 16 on */
#if PG_VERSION_NUM >= 160000
typedef JsonParseErrorType json_action_result;
#define JSON_ACTION_DONE return JSON_SUCCESS
#else
typedef void json_action_result;
#define JSON_ACTION_DONE return
#endif

/* 17 lets the caller provide the lexer; we let it allocate one */
#if PG_VERSION_NUM >= 170000
#define compat_json_lex_context(json, len, encoding) \
	makeJsonLexContextCstringLen(NULL, (json), (len), (encoding), true)
#else
#define compat_json_lex_context(json, len, encoding) \
	makeJsonLexContextCstringLen((json), (len), (encoding), true)
#endif

#ifndef FRONTEND

#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_publication.h"
#include "utils/acl.h"

/* 16 folded the per-catalog ownership and ACL checks into object_* calls */
#if PG_VERSION_NUM >= 160000
#define compat_owns_relation(relid, role) \
	object_ownercheck(RelationRelationId, (relid), (role))
#define compat_owns_publication(pubid, role) \
	object_ownercheck(PublicationRelationId, (pubid), (role))
#define compat_database_aclcheck(dbid, role, mode) \
	object_aclcheck(DatabaseRelationId, (dbid), (role), (mode))
#else
#define compat_owns_relation(relid, role) pg_class_ownercheck((relid), (role))
#define compat_owns_publication(pubid, role) pg_publication_ownercheck((pubid), (role))
#define compat_database_aclcheck(dbid, role, mode) \
	pg_database_aclcheck((dbid), (role), (mode))
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

#endif							/* !FRONTEND */

#endif							/* FLUSSO_COMPAT_H */

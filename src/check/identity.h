/*-------------------------------------------------------------------------
 *
 * identity.h
 *	  What a table's replica identity puts in its change records, and the
 *	  ALTER TABLE that would make it put in what flusso needs.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_CHECK_IDENTITY_H
#define FLUSSO_CHECK_IDENTITY_H

#include "nodes/bitmapset.h"
#include "nodes/pg_list.h"

typedef struct TableIdentity
{
	bool		usable;			/* updates and deletes can be published */
	bool		full;			/* REPLICA IDENTITY FULL: every column */
	Bitmapset  *columns;		/* attribute numbers in the identity */
	List	   *partitions;		/* of a partitioned table: its partitions'
								 * TableIdentity, by relid (PartitionIdentity) */
} TableIdentity;

typedef struct PartitionIdentity
{
	Oid			relid;
	TableIdentity identity;
} PartitionIdentity;

extern void identity_of(Oid relid, TableIdentity *identity);
extern List *identity_missing(const TableIdentity *identity, Oid relid, List *columns);
extern char *identity_fix_sql(Oid relid, List *columns);

#endif							/* FLUSSO_CHECK_IDENTITY_H */

/*-------------------------------------------------------------------------
 *
 * relation_entry.h
 *	  What the output plugin knows about one relation (whether it is
 *	  emitted, under which table's name, with which columns and how they
 *	  are written), cached until the relation or a publication changes.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_CDC_RELATION_ENTRY_H
#define FLUSSO_CDC_RELATION_ENTRY_H

#include "catalog/pg_publication.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "nodes/bitmapset.h"
#include "utils/relcache.h"

/* Which relations are emitted, and how: the plugin's options. */
typedef struct EmitRules
{
	MemoryContext context;		/* the decoding context's: entries live there */
	char	   *publication;
	List	   *column_specs;
	List	   *read_specs;		/* "reads" options */
} EmitRules;

/* What the plugin knows about one relation, until it is invalidated. */
typedef struct RelationEntry
{
	Oid			relid;			/* hash key */
	bool		valid;
	bool		emitted;		/* published, or flusso.signal */
	bool		wanted;			/* named by a "columns" option */
	PublicationActions actions;
	Oid			emit_relid;		/* the table its records name */
	char	   *nspname;		/* and that table's name */
	char	   *relname;
	int			ncolumns;
	char	  **names;
	AttrNumber *attnums;		/* InvalidAttrNumber: the column is gone */
	Oid		   *types;			/* type per column */
	FmgrInfo   *output;			/* output function per column */
	bool		identity_full;
	Bitmapset  *identity;		/* attnums an old key tuple carries */
	bool		reads_known;	/* every column an index reads is in reads */
	Bitmapset  *reads;			/* and their attnums */
	StringInfoData header_tail; /* relid, names: the same in every record */
	MemoryContext context;		/* owns everything above */
} RelationEntry;

extern void relation_entries_create(MemoryContext context);
extern void relation_entries_forget(void);
extern RelationEntry *relation_entry(const EmitRules *rules, Relation rel);

#endif							/* FLUSSO_CDC_RELATION_ENTRY_H */

/*-------------------------------------------------------------------------
 *
 * draft_tables.h
 *	  What flusso_draft reads of the system catalogs: a table's columns, its primary
 *	  key, the foreign keys from and to it, and which tables are junctions.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_DESIGN_DRAFT_TABLES_H
#define FLUSSO_DESIGN_DRAFT_TABLES_H

#include "nodes/pg_list.h"

/* One column of a table, in attnum order. */
typedef struct DraftColumn
{
	AttrNumber	attnum;
	char	   *name;
	Oid			type;
	bool		notnull;
} DraftColumn;

/*
 * A foreign key: the referencing table's columns (from) point at the
 * referenced table's (to).  Only single-column keys can be drafted; the
 * others are kept to be mentioned.
 */
typedef struct DraftForeignKey
{
	Oid			conoid;
	char	   *conname;
	Oid			from_relid;
	Oid			to_relid;
	int			ncolumns;
	AttrNumber	from_attnum;	/* the first column */
	AttrNumber	to_attnum;
} DraftForeignKey;

extern List *draft_columns(Oid relid);
extern bool draft_column_notnull(Oid relid, AttrNumber attnum);
extern List *draft_primary_key(Oid relid);
extern AttrNumber draft_single_key(Oid relid);
extern bool draft_column_unique(Oid relid, AttrNumber attnum);
extern List *draft_foreign_keys(Oid relid, bool incoming);
extern DraftForeignKey *draft_junction_far_key(const DraftForeignKey *near);
extern char *draft_table_display(Oid relid);

#endif							/* FLUSSO_DESIGN_DRAFT_TABLES_H */

/*-------------------------------------------------------------------------
 *
 * draft_walk.h
 *	  The walk of a draft (draft_walk.c): the draft being written (its
 *	  notes and size bound), a fields: list, and the verbs flusso_draft
 *	  (api/draft.c) writes a draft with.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_DESIGN_DRAFT_WALK_H
#define FLUSSO_DESIGN_DRAFT_WALK_H

#include "nodes/pg_list.h"

#include "design/draft_tables.h"
#include "schema/value.h"

/*
 * The size a draft is held to, so that flusso_create_index takes it as it
 * is: three quarters of the largest definition it reads, in bytes and in
 * values, measured by an upper bound of what the emitter writes (every
 * byte of a scalar counted as its longest escape).
 */
#define DRAFT_MAX_BYTES		(SCHEMA_MAX_INPUT / 4 * 3)
#define DRAFT_MAX_VALUES	(SCHEMA_MAX_VALUES / 4 * 3)

/* joins left out for size that get a comment each; the rest are counted */
#define DRAFT_SIZE_NOTES	20

/* The fields: list of one table, as it is drafted. */
typedef struct FieldList
{
	SchemaValue *items;
	const char *path;			/* where it is, for comments: "" at the root */
	int			level;			/* how deep its items nest, for the size bound */
	List	   *names;			/* field names taken */
} FieldList;

/* How a table was reached: by which foreign key, at which end of it. */
typedef struct Arrival
{
	Oid			conoid;			/* InvalidOid for the root */
	bool		referenced;		/* this table is the one the key points at */
} Arrival;

typedef struct DraftContext
{
	const char *root_nspname;	/* what a join's schema defaults to */
	List	   *notes;			/* comment lines, made by design_comment_text */
	Size		bytes;			/* bound of the text drafted so far */
	int			values;			/* values drafted so far */
	int			size_left_out;	/* joins left out for size */
} DraftContext;

extern void draft_count_cost(DraftContext *cx, const char *key, const SchemaValue *value,
							 int level);
extern void draft_add_note(DraftContext *cx, FieldList *list, const char *text);
extern SchemaValue *draft_key_value(Oid relid, List *key);
extern bool draft_names_valid(Oid relid, List *key);
extern SchemaValue *draft_fields(DraftContext *cx, const char *path, int level,
								 Oid relid, int depth, Arrival arrival);

#endif							/* FLUSSO_DESIGN_DRAFT_WALK_H */

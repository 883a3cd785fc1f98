/*-------------------------------------------------------------------------
 *
 * thin_change.h
 *	  The record flusso's output plugin emits for one row change: which
 *	  relation, which operation, which commit, and the values of only the
 *	  columns that resolution needs, for the old and the new row.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_CDC_THIN_CHANGE_H
#define FLUSSO_CDC_THIN_CHANGE_H

#include "access/xlogdefs.h"
#include "datatype/timestamp.h"
#include "lib/stringinfo.h"

#define THIN_CHANGE_FORMAT 1

typedef enum ThinChangeOp
{
	THIN_INSERT = 'I',
	THIN_UPDATE = 'U',
	THIN_DELETE = 'D',
	THIN_TRUNCATE = 'T',
	THIN_REWRITE = 'R',			/* ALTER TABLE rewrote every row */
	THIN_UNCOVERED = 'N'		/* a change the publication did not cover */
} ThinChangeOp;

/* How one column of one row version was logged. */
typedef enum ThinValueKind
{
	THIN_TEXT = 't',			/* a value, in its type's text form */
	THIN_NULL = 'n',			/* SQL NULL */
	THIN_UNCHANGED = 'u',		/* an unchanged TOASTed value, not logged */
	THIN_MISSING = 'm'			/* not in the change record (replica identity) */
} ThinValueKind;

typedef struct ThinValue
{
	ThinValueKind kind;
	char	   *text;			/* THIN_TEXT only */
} ThinValue;

typedef struct ThinChange
{
	ThinChangeOp op;
	TransactionId xid;			/* top-level transaction */
	XLogRecPtr	commit_end_lsn; /* end of the commit record */
	TimestampTz commit_time;
	Oid			relid;
	char	   *nspname;
	char	   *relname;
	int			ncolumns;
	char	  **columns;
	ThinValue  *old_values;		/* NULL when no old row was logged */
	ThinValue  *new_values;		/* NULL for deletes and truncates */
} ThinChange;

#define THIN_HAS_OLD 1
#define THIN_HAS_NEW 2

/*
 * What a batch needs of a record without decoding it: the per-transaction
 * fields, and where the part that identifies the change (relation and
 * values) begins, for deduplication.
 */
typedef struct ThinChangeHeader
{
	ThinChangeOp op;
	TransactionId xid;
	XLogRecPtr	commit_end_lsn;
	TimestampTz commit_time;
	Oid			relid;
	int			identity_offset;	/* the rest of the record from here on */
} ThinChangeHeader;

extern void thin_change_write_header(StringInfo out, const ThinChange *change, int flags);
extern void thin_change_write_start(StringInfo out, const ThinChange *change);
extern void thin_change_write_relation(StringInfo out, const ThinChange *change);
extern void thin_change_write_value(StringInfo out, ThinValueKind kind,
									const char *text, int len);
extern bool thin_change_read(const char *data, int len, ThinChange *change);
extern bool thin_change_read_header(const char *data, int len, ThinChangeHeader *header);
extern char *thin_change_text(const ThinChange *change);

#endif							/* FLUSSO_CDC_THIN_CHANGE_H */

/*-------------------------------------------------------------------------
 *
 * thin_change.c
 *	  The binary form of a thin change, read and written, and its text
 *	  rendering for humans and regression tests.
 *
 * Layout (integers in network byte order):
 *	  format:1  op:1  xid:4  commit_end_lsn:8  commit_time:8  relid:4
 *	  nspname  relname  ncolumns:1  column names...
 *	  flags:1 (1 = old row follows, 2 = new row follows)
 *	  per row, per column: kind:1, and for THIN_TEXT length:4 and bytes
 * where a name is length:1 and bytes.  Names are PostgreSQL identifiers,
 * so they fit in NAMEDATALEN.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/pg_lsn.h"

#include "cdc/thin_change.h"

static void
write_name(StringInfo out, const char *name)
{
	int			len = strlen(name);

	Assert(len < 256);
	pq_sendbyte(out, (uint8) len);
	pq_sendbytes(out, name, len);
}

/*
 * The fixed part of a record, up to and including the flags that say which
 * rows follow; the rows are written value by value after it.
 */
void
thin_change_write_header(StringInfo out, const ThinChange *change, int flags)
{
	thin_change_write_start(out, change);
	thin_change_write_relation(out, change);
	pq_sendbyte(out, (uint8) flags);
}

/* The per-transaction part of the header: format, op, xid, commit. */
void
thin_change_write_start(StringInfo out, const ThinChange *change)
{
	pq_sendbyte(out, THIN_CHANGE_FORMAT);
	pq_sendbyte(out, (uint8) change->op);
	pq_sendint32(out, change->xid);
	pq_sendint64(out, change->commit_end_lsn);
	pq_sendint64(out, change->commit_time);
}

/* The per-relation part: relid, names and columns; the plugin caches it. */
void
thin_change_write_relation(StringInfo out, const ThinChange *change)
{
	pq_sendint32(out, change->relid);
	write_name(out, change->nspname);
	write_name(out, change->relname);
	pq_sendbyte(out, (uint8) change->ncolumns);
	for (int i = 0; i < change->ncolumns; i++)
		write_name(out, change->columns[i]);
}

/* One value of a row; text and len only for THIN_TEXT. */
void
thin_change_write_value(StringInfo out, ThinValueKind kind, const char *text, int len)
{
	pq_sendbyte(out, (uint8) kind);
	if (kind == THIN_TEXT)
	{
		pq_sendint32(out, len);
		pq_sendbytes(out, text, len);
	}
}

/* A bounds-checked cursor over a record. */
typedef struct Reader
{
	const char *data;
	int			len;
	int			pos;
	bool		ok;
} Reader;

/*
 * The next n bytes, or NULL once the record is too short.  The test never
 * adds to pos: a length read from the record may be anything up to
 * 0xffffffff, and pos + n would wrap around; len - pos cannot, since pos
 * never passes len.
 */
static const char *
take(Reader *r, int64 n)
{
	const char *p;

	if (!r->ok || n < 0 || n > r->len - r->pos)
	{
		r->ok = false;
		return NULL;
	}
	p = r->data + r->pos;
	r->pos += (int) n;
	return p;
}

static uint64
take_uint(Reader *r, int bytes)
{
	const unsigned char *p = (const unsigned char *) take(r, bytes);
	uint64		v = 0;

	for (int i = 0; p && i < bytes; i++)
		v = (v << 8) | p[i];
	return v;
}

/* A name or a value: text, so a NUL byte in it makes the record malformed. */
static char *
take_string(Reader *r, int64 len)
{
	const char *p = take(r, len);

	if (p == NULL || memchr(p, '\0', len) != NULL)
	{
		r->ok = false;
		return NULL;
	}
	return pnstrdup(p, len);
}

static ThinValue *
read_row(Reader *r, int ncolumns)
{
	ThinValue  *values = palloc0(sizeof(ThinValue) * Max(ncolumns, 1));

	for (int i = 0; i < ncolumns && r->ok; i++)
	{
		values[i].kind = (ThinValueKind) take_uint(r, 1);
		if (values[i].kind == THIN_TEXT)
			values[i].text = take_string(r, (int64) take_uint(r, 4));
		else if (values[i].kind != THIN_NULL && values[i].kind != THIN_UNCHANGED &&
				 values[i].kind != THIN_MISSING)
			r->ok = false;
	}
	return values;
}

/*
 * Read the fixed fields of a record's header, up to its relation; false
 * if it is too short or of another format.
 */
bool
thin_change_read_header(const char *data, int len, ThinChangeHeader *header)
{
	Reader		r = {data, len, 0, true};

	if (take_uint(&r, 1) != THIN_CHANGE_FORMAT)
		return false;
	header->op = (ThinChangeOp) take_uint(&r, 1);
	header->xid = (TransactionId) take_uint(&r, 4);
	header->commit_end_lsn = (XLogRecPtr) take_uint(&r, 8);
	header->commit_time = (TimestampTz) take_uint(&r, 8);
	/* the identity is the relation and what follows: not xid nor commit */
	header->identity_offset = r.pos;
	header->relid = (Oid) take_uint(&r, 4);
	return r.ok;
}

/* Decode a record; false if it is not a well-formed thin change. */
bool
thin_change_read(const char *data, int len, ThinChange *change)
{
	Reader		r = {data, len, 0, true};
	int			flags;

	memset(change, 0, sizeof(ThinChange));
	if (take_uint(&r, 1) != THIN_CHANGE_FORMAT)
		return false;
	change->op = (ThinChangeOp) take_uint(&r, 1);
	change->xid = (TransactionId) take_uint(&r, 4);
	change->commit_end_lsn = (XLogRecPtr) take_uint(&r, 8);
	change->commit_time = (TimestampTz) take_uint(&r, 8);
	change->relid = (Oid) take_uint(&r, 4);
	change->nspname = take_string(&r, (int64) take_uint(&r, 1));
	change->relname = take_string(&r, (int64) take_uint(&r, 1));
	change->ncolumns = (int) take_uint(&r, 1);
	change->columns = palloc0(sizeof(char *) * Max(change->ncolumns, 1));
	for (int i = 0; i < change->ncolumns && r.ok; i++)
		change->columns[i] = take_string(&r, (int64) take_uint(&r, 1));
	flags = (int) take_uint(&r, 1);
	if (flags & THIN_HAS_OLD)
		change->old_values = read_row(&r, change->ncolumns);
	if (flags & THIN_HAS_NEW)
		change->new_values = read_row(&r, change->ncolumns);
	if (change->op != THIN_INSERT && change->op != THIN_UPDATE &&
		change->op != THIN_DELETE && change->op != THIN_TRUNCATE &&
		change->op != THIN_REWRITE && change->op != THIN_UNCOVERED)
		return false;
	return r.ok && r.pos == len;
}

static void
append_row(StringInfo buf, const char *label, const ThinChange *change,
		   const ThinValue *values)
{
	appendStringInfo(buf, " %s(", label);
	for (int i = 0; i < change->ncolumns; i++)
	{
		appendStringInfo(buf, "%s%s", i > 0 ? ", " : "", change->columns[i]);
		switch (values[i].kind)
		{
			case THIN_TEXT:
				appendStringInfo(buf, "=%s", quote_literal_cstr(values[i].text));
				break;
			case THIN_NULL:
				appendStringInfoString(buf, " null");
				break;
			case THIN_UNCHANGED:
				appendStringInfoString(buf, " unchanged");
				break;
			case THIN_MISSING:
				appendStringInfoString(buf, " not logged");
				break;
		}
	}
	appendStringInfoChar(buf, ')');
}

/*
 * "U public.reviews old(id='5', book_id='1') new(id='5', book_id='2')":
 * the operation, relation and values; commit positions are left out so that
 * the text is the same on every run.
 */
char *
thin_change_text(const ThinChange *change)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfo(&buf, "%c %s.%s", (char) change->op,
					 quote_identifier(change->nspname), quote_identifier(change->relname));
	if (change->old_values)
		append_row(&buf, "old", change, change->old_values);
	if (change->new_values)
		append_row(&buf, "new", change, change->new_values);
	return buf.data;
}

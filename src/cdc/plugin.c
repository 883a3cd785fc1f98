/*-------------------------------------------------------------------------
 *
 * plugin.c
 *	  flusso's logical decoding output plugin: one thin change per row
 *	  change of a published table, carrying only the columns resolution
 *	  needs.
 *
 * Options (all optional):
 *	  publication	the publication deciding which tables are emitted
 *					(default "flusso"); one that does not exist at the
 *					decoded position means no tables, never an error
 *	  columns		repeatable, "schema.table:col,col": the columns to emit
 *					for that table; a table without one emits its replica
 *					identity key (its primary key under FULL, all columns
 *					when it has neither)
 *	  reads			repeatable, the same form: every column the indexes
 *					read from that table.  An UPDATE that logged its old
 *					row whole (REPLICA IDENTITY FULL) and left each of
 *					them as it was is not emitted: it changes no document.
 *					Without the option, or the whole old row, every
 *					UPDATE is emitted: nothing proves it changed nothing.
 * flusso.signal is always emitted.  Nothing is written for BEGIN or COMMIT,
 * so a transaction that touched no emitted table produces no output.
 *
 * Two records say that changes were not (or cannot be) emitted one by one,
 * so that the worker seeds the indexes that read the table again; each
 * is written once per transaction and table:
 *	  R (rewrite)	ALTER TABLE rewrote an emitted table (a column's type
 *					changed, say): every row may read differently, and no
 *					row change was logged.  Seen through the rows of the
 *					rewrite's transient heap, which the reorder buffer hands
 *					over because the plugin asks for rewrites.
 *	  N (uncovered)	a table named by a "columns" option changed while the
 *					publication did not publish that change (the table or
 *					the publication was dropped from it, or the action is
 *					not published): the change is lost to whoever reads it.
 * Both are decided from the system catalogs as of the change, like
 * everything the plugin looks up.
 *
 * A partition's changes are written as changes of the partitioned table a
 * "columns" option names (itself, or its nearest such ancestor), so that a
 * definition names the partitioned table and never sees its partitions; a
 * row an UPDATE of the partition key moves is a delete and an insert of
 * that one table, in one transaction.  A TRUNCATE that empties some of
 * that table's partitions but not all is written as R: the worker cannot
 * tell which rows went, and seeds the indexes reading the table again.
 *
 * Catalog lookups happen lazily in the change callbacks, under the historic
 * snapshot: the startup callback may run outside a transaction.  What was
 * looked up is cached per relation (relation_entry.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "libpq/pqformat.h"
#include "replication/logical.h"
#include "replication/output_plugin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "cdc/options.h"
#include "cdc/relation_entry.h"
#include "cdc/thin_change.h"
#include "compat.h"

typedef struct PluginData
{
	EmitRules	rules;			/* which relations are written, and how */
	MemoryContext change_context;	/* reset after every change */
	/* the last R or N record written: one per transaction and table */
	TransactionId noted_xid;
	Oid			noted_relid;
	ThinChangeOp noted_op;
} PluginData;

extern PGDLLEXPORT void _PG_output_plugin_init(OutputPluginCallbacks *cb);

static void
plugin_startup(LogicalDecodingContext *ctx, OutputPluginOptions *opt, bool is_init)
{
	PluginData *data = palloc0(sizeof(PluginData));
	ListCell   *lc;

	data->rules.context = ctx->context;
	data->change_context = AllocSetContextCreate(ctx->context, "flusso change",
												 ALLOCSET_DEFAULT_SIZES);
	data->rules.publication = pstrdup(CDC_DEFAULT_PUBLICATION);
	opt->output_type = OUTPUT_PLUGIN_BINARY_OUTPUT;
	opt->receive_rewrites = true;	/* to see a rewrite; its rows are not emitted */
	ctx->output_plugin_private = data;

	foreach(lc, ctx->output_plugin_options)
	{
		DefElem    *elem = lfirst(lc);

		if (strcmp(elem->defname, "publication") == 0)
			data->rules.publication = defGetString(elem);
		else if (strcmp(elem->defname, "columns") == 0)
			data->rules.column_specs = lappend(data->rules.column_specs,
										 cdc_parse_columns("columns", defGetString(elem)));
		else if (strcmp(elem->defname, "reads") == 0)
			data->rules.read_specs = lappend(data->rules.read_specs,
										 cdc_parse_columns("reads", defGetString(elem)));
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("flusso option \"%s\" is not recognized", elem->defname),
					 errhint("The options are publication, columns and reads.")));
	}

	relation_entries_create(ctx->context);
}

static void
plugin_shutdown(LogicalDecodingContext *ctx)
{
	/* the entries live in ctx->context, which is about to go */
	relation_entries_forget();
}

/*
 * Write one value in its type's text form.  The common key types are
 * formatted directly: this is the plugin's hot path.
 */
static void
write_value(StringInfo out, RelationEntry *entry, int c, Datum value)
{
	char		buf[MAXINT8LEN + 1];
	int			len;

	switch (entry->types[c])
	{
		case INT2OID:
			len = pg_ltoa(DatumGetInt16(value), buf);
			thin_change_write_value(out, THIN_TEXT, buf, len);
			return;
		case INT4OID:
			len = pg_ltoa(DatumGetInt32(value), buf);
			thin_change_write_value(out, THIN_TEXT, buf, len);
			return;
		case INT8OID:
			len = pg_lltoa(DatumGetInt64(value), buf);
			thin_change_write_value(out, THIN_TEXT, buf, len);
			return;
		case TEXTOID:
		case VARCHAROID:
			{
				text	   *t = DatumGetTextPP(value);

				thin_change_write_value(out, THIN_TEXT, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
				return;
			}
		default:
			{
				char	   *s = OutputFunctionCall(&entry->output[c], value);

				thin_change_write_value(out, THIN_TEXT, s, strlen(s));
				return;
			}
	}
}

/*
 * Write the emitted columns of one row version.  An old row with the
 * default identity carries only the identity key: other columns were not
 * logged, which is not the same as null.
 */
static void
write_row(StringInfo out, RelationEntry *entry, Relation rel, HeapTuple tuple,
		  bool is_old_key)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int c = 0; c < entry->ncolumns; c++)
	{
		AttrNumber	attnum = entry->attnums[c];
		bool		isnull;
		Datum		value;

		if (attnum == InvalidAttrNumber || attnum > desc->natts ||
			(is_old_key && !bms_is_member(attnum, entry->identity)))
		{
			thin_change_write_value(out, THIN_MISSING, NULL, 0);
			continue;
		}
		value = heap_getattr(tuple, attnum, desc, &isnull);
		if (isnull)
			thin_change_write_value(out, THIN_NULL, NULL, 0);
		else if (TupleDescAttr(desc, attnum - 1)->attlen == -1 &&
				 VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(value)))
			thin_change_write_value(out, THIN_UNCHANGED, NULL, 0);
		else
			write_value(out, entry, c, value);
	}
}

static void
start_change(ThinChange *change, ReorderBufferTXN *txn, RelationEntry *entry,
			 ThinChangeOp op)
{
	memset(change, 0, sizeof(ThinChange));
	change->op = op;
	change->xid = txn->xid;
	change->commit_end_lsn = txn->end_lsn;
	change->commit_time = txn->xact_time.commit_time;
	change->relid = entry->emit_relid;
	change->nspname = entry->nspname;
	change->relname = entry->relname;
	change->ncolumns = entry->ncolumns;
	change->columns = entry->names;
}

/* Write a record of op on entry's table that carries no values (T, R, N). */
static void
write_table_record(LogicalDecodingContext *ctx, ReorderBufferTXN *txn,
				   RelationEntry *entry, ThinChangeOp op)
{
	ThinChange	thin;

	start_change(&thin, txn, entry, op);
	thin.ncolumns = 0;
	OutputPluginPrepareWrite(ctx, true);
	thin_change_write_header(ctx->out, &thin, 0);
	OutputPluginWrite(ctx, true);
}

/*
 * Write an R or N record for entry's table, unless this transaction wrote
 * the same one last.
 */
static void
note_table(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, RelationEntry *entry,
		   ThinChangeOp op)
{
	PluginData *data = ctx->output_plugin_private;

	if (data->noted_xid == txn->xid && data->noted_relid == entry->emit_relid &&
		data->noted_op == op)
		return;
	data->noted_xid = txn->xid;
	data->noted_relid = entry->emit_relid;
	data->noted_op = op;
	write_table_record(ctx, txn, entry, op);
}

/*
 * A row of the transient heap an ALTER TABLE rewrites original into: note
 * the rewrite of an emitted table, or a wanted one left unpublished.
 */
static void
rewritten_row(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, Oid original)
{
	PluginData *data = ctx->output_plugin_private;
	Relation	rel;
	RelationEntry *entry;

	if (data->noted_xid == txn->xid && data->noted_relid == original)
		return;
	rel = RelationIdGetRelation(original);
	if (!RelationIsValid(rel))
		return;
	entry = relation_entry(&data->rules, rel);
	if (entry->emitted)
		note_table(ctx, txn, entry, THIN_REWRITE);
	else if (entry->wanted)
		note_table(ctx, txn, entry, THIN_UNCOVERED);
	RelationClose(rel);
}

/*
 * Did an UPDATE leave every column the indexes read as it was?  Provable
 * only from an old row logged whole (identity FULL) and a known set of
 * columns.  A value TOASTed out of line that the new row carries as a
 * pointer was not changed (a changed one arrives reassembled, as pgoutput
 * relies on too); others are compared by their bytes, so that an equal
 * value stored differently counts as a change, which only costs a build.
 */
static bool
reads_unchanged(RelationEntry *entry, Relation rel, HeapTuple old_row, HeapTuple new_row)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			attnum = -1;

	if (!entry->reads_known || !entry->identity_full || old_row == NULL || new_row == NULL)
		return false;
	while ((attnum = bms_next_member(entry->reads, attnum)) >= 0)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, attnum - 1);
		bool		old_null;
		bool		new_null;
		Datum		old_value = heap_getattr(old_row, attnum, desc, &old_null);
		Datum		new_value = heap_getattr(new_row, attnum, desc, &new_null);

		if (old_null != new_null)
			return false;
		if (old_null)
			continue;
		if (attr->attlen == -1 && VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(new_value)))
			continue;
		if (attr->attlen == -1 && VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(old_value)))
			return false;
		if (!datum_image_eq(old_value, new_value, attr->attbyval, attr->attlen))
			return false;
	}
	return true;
}

/*
 * An insert carries the new row, a delete the old row, an update both; the
 * old row only when the WAL logged one (a key change, or identity FULL).
 * An update that changed no column an index reads is not written.
 */
static void
plugin_change(LogicalDecodingContext *ctx, ReorderBufferTXN *txn,
			  Relation relation, ReorderBufferChange *change)
{
	PluginData *data = ctx->output_plugin_private;
	RelationEntry *entry;
	MemoryContext old;
	ThinChange	thin;
	ThinChangeOp op;
	bool		published;
	HeapTuple	old_row = NULL;
	HeapTuple	new_row = NULL;

	if (OidIsValid(relation->rd_rel->relrewrite))
	{
		rewritten_row(ctx, txn, relation->rd_rel->relrewrite);
		return;
	}
	entry = relation_entry(&data->rules, relation);

	switch (change->action)
	{
		case REORDER_BUFFER_CHANGE_INSERT:
			op = THIN_INSERT;
			published = entry->actions.pubinsert;
			break;
		case REORDER_BUFFER_CHANGE_UPDATE:
			op = THIN_UPDATE;
			published = entry->actions.pubupdate;
			break;
		case REORDER_BUFFER_CHANGE_DELETE:
			op = THIN_DELETE;
			published = entry->actions.pubdelete;
			break;
		default:
			return;
	}
	if (!entry->emitted || !published)
	{
		if (entry->wanted)
			note_table(ctx, txn, entry, THIN_UNCOVERED);
		return;
	}

	if (change->data.tp.oldtuple)
		old_row = compat_change_tuple(change->data.tp.oldtuple);
	if (change->data.tp.newtuple && op != THIN_DELETE)
		new_row = compat_change_tuple(change->data.tp.newtuple);
	if (op == THIN_UPDATE && reads_unchanged(entry, relation, old_row, new_row))
		return;

	old = MemoryContextSwitchTo(data->change_context);
	start_change(&thin, txn, entry, op);
	OutputPluginPrepareWrite(ctx, true);
	thin_change_write_start(ctx->out, &thin);
	appendBinaryStringInfo(ctx->out, entry->header_tail.data, entry->header_tail.len);
	pq_sendbyte(ctx->out, (old_row ? THIN_HAS_OLD : 0) | (new_row ? THIN_HAS_NEW : 0));
	if (old_row)
		write_row(ctx->out, entry, relation, old_row, !entry->identity_full);
	if (new_row)
		write_row(ctx->out, entry, relation, new_row, false);
	OutputPluginWrite(ctx, true);
	MemoryContextSwitchTo(old);
	MemoryContextReset(data->change_context);
}

/*
 * Does the truncated set (relids) hold every partition of the partitioned
 * table that holds rows?
 */
static bool
truncates_every_partition(Oid parent, List *relids)
{
	ListCell   *lc;

	foreach(lc, find_all_inheritors(parent, NoLock, NULL))
	{
		Oid			relid = lfirst_oid(lc);

		if (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE &&
			!list_member_oid(relids, relid))
			return false;
	}
	return true;
}

/*
 * One T record per table the TRUNCATE emptied, an R record for a
 * partitioned table it emptied only in part.
 */
static void
plugin_truncate(LogicalDecodingContext *ctx, ReorderBufferTXN *txn,
				int nrelations, Relation relations[], ReorderBufferChange *change)
{
	PluginData *data = ctx->output_plugin_private;
	MemoryContext old = MemoryContextSwitchTo(data->change_context);
	List	   *truncated = NIL;
	List	   *written = NIL;

	for (int i = 0; i < nrelations; i++)
		truncated = lappend_oid(truncated, RelationGetRelid(relations[i]));
	for (int i = 0; i < nrelations; i++)
	{
		RelationEntry *entry = relation_entry(&data->rules, relations[i]);

		if (!entry->emitted || !entry->actions.pubtruncate)
		{
			if (entry->wanted)
				note_table(ctx, txn, entry, THIN_UNCOVERED);
			continue;
		}
		if (list_member_oid(written, entry->emit_relid))
			continue;
		written = lappend_oid(written, entry->emit_relid);
		if (entry->emit_relid == entry->relid ||
			truncates_every_partition(entry->emit_relid, truncated))
			write_table_record(ctx, txn, entry, THIN_TRUNCATE);
		else
			note_table(ctx, txn, entry, THIN_REWRITE);
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(data->change_context);
}

/* Nothing is written for transaction boundaries. */
static void
plugin_begin(LogicalDecodingContext *ctx, ReorderBufferTXN *txn)
{
}

/*
 * Nothing is written for transaction boundaries.  What a decoding process
 * does once a transaction was replayed is its own: the worker's reader
 * notes it (cdc/decode.c); a backend reading the slot through SQL needs
 * nothing.
 */
static void
plugin_commit(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr commit_lsn)
{
}

void
_PG_output_plugin_init(OutputPluginCallbacks *cb)
{
	cb->startup_cb = plugin_startup;
	cb->begin_cb = plugin_begin;
	cb->change_cb = plugin_change;
	cb->truncate_cb = plugin_truncate;
	cb->commit_cb = plugin_commit;
	cb->shutdown_cb = plugin_shutdown;
}

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
 * Both are decided from the catalog as of the change, like everything the
 * plugin looks up.
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
 * looked up is cached per relation and invalidated like pgoutput's cache,
 * with callbacks registered once per process.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/sysattr.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_publication.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "libpq/pqformat.h"
#include "replication/logical.h"
#include "replication/output_plugin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

#include "cdc/options.h"
#include "cdc/thin_change.h"
#include "util/xact.h"
#include "compat.h"

typedef struct PluginData
{
	MemoryContext context;		/* the decoding context's: lives as long */
	MemoryContext change_context;	/* reset after every change */
	char	   *publication;
	List	   *column_specs;
	/* the last R or N record written: one per transaction and table */
	TransactionId noted_xid;
	Oid			noted_relid;
	ThinChangeOp noted_op;
} PluginData;

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
	StringInfoData header_tail; /* relid, names: the same in every record */
	MemoryContext context;		/* owns everything above */
} RelationEntry;

static HTAB *relation_cache = NULL;
static RelationEntry *last_entry = NULL;	/* consecutive changes share it */
static bool callbacks_registered = false;

extern PGDLLEXPORT void _PG_output_plugin_init(OutputPluginCallbacks *cb);

static void
invalidate_relation(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	RelationEntry *entry;

	if (relation_cache == NULL)
		return;
	if (OidIsValid(relid))
	{
		entry = hash_search(relation_cache, &relid, HASH_FIND, NULL);
		if (entry)
			entry->valid = false;
		return;
	}
	hash_seq_init(&status, relation_cache);
	while ((entry = hash_seq_search(&status)) != NULL)
		entry->valid = false;
}

/* Publication membership changed somewhere: recompute every entry. */
static void
invalidate_all(Datum arg, int cacheid, uint32 hashvalue)
{
	invalidate_relation(arg, InvalidOid);
}

static void
plugin_startup(LogicalDecodingContext *ctx, OutputPluginOptions *opt, bool is_init)
{
	PluginData *data = palloc0(sizeof(PluginData));
	ListCell   *lc;
	HASHCTL		hash;

	data->context = ctx->context;
	data->change_context = AllocSetContextCreate(ctx->context, "flusso change",
												 ALLOCSET_DEFAULT_SIZES);
	data->publication = pstrdup(CDC_DEFAULT_PUBLICATION);
	opt->output_type = OUTPUT_PLUGIN_BINARY_OUTPUT;
	opt->receive_rewrites = true;	/* to see a rewrite; its rows are not emitted */
	ctx->output_plugin_private = data;

	foreach(lc, ctx->output_plugin_options)
	{
		DefElem    *elem = lfirst(lc);

		if (strcmp(elem->defname, "publication") == 0)
			data->publication = defGetString(elem);
		else if (strcmp(elem->defname, "columns") == 0)
			data->column_specs = lappend(data->column_specs,
										 cdc_parse_columns(defGetString(elem)));
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("flusso option \"%s\" is not recognized", elem->defname),
					 errhint("The options are publication and columns.")));
	}

	memset(&hash, 0, sizeof(hash));
	hash.keysize = sizeof(Oid);
	hash.entrysize = sizeof(RelationEntry);
	hash.hcxt = ctx->context;
	relation_cache = hash_create("flusso relations", 64, &hash,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	last_entry = NULL;

	if (!callbacks_registered)
	{
		CacheRegisterRelcacheCallback(invalidate_relation, (Datum) 0);
		CacheRegisterSyscacheCallback(PUBLICATIONOID, invalidate_all, (Datum) 0);
		CacheRegisterSyscacheCallback(PUBLICATIONRELMAP, invalidate_all, (Datum) 0);
		CacheRegisterSyscacheCallback(PUBLICATIONNAMESPACEMAP, invalidate_all, (Datum) 0);
		callbacks_registered = true;
	}
}

static void
plugin_shutdown(LogicalDecodingContext *ctx)
{
	/* the hash lives in ctx->context, which is about to go */
	relation_cache = NULL;
	last_entry = NULL;
}

/* Is rel in the publication, directly, by schema, or through an ancestor? */
static bool
in_publication(Publication *pub, Relation rel)
{
	List	   *relids = list_make1_oid(RelationGetRelid(rel));
	ListCell   *lc;

	if (!is_publishable_relation(rel))
		return false;
	if (pub->alltables)
		return true;
	if (rel->rd_rel->relispartition)
		relids = list_concat(relids, get_partition_ancestors(RelationGetRelid(rel)));
	foreach(lc, relids)
	{
		Oid			relid = lfirst_oid(lc);

		if (list_member_oid(GetRelationPublications(relid), pub->oid) ||
			list_member_oid(GetSchemaPublications(get_rel_namespace(relid)), pub->oid))
			return true;
	}
	return false;
}

/* The columns emitted when none were asked for: the replica identity key. */
static List *
default_columns(Relation rel, const RelationEntry *entry)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Bitmapset  *keys = entry->identity;
	List	   *names = NIL;
	int			i = -1;

	if (bms_is_empty(keys))
	{
		Bitmapset  *pkey = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_PRIMARY_KEY);

		while ((i = bms_next_member(pkey, i)) >= 0)
			keys = bms_add_member(keys, i + FirstLowInvalidHeapAttributeNumber);
	}
	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, a);

		if (!attr->attisdropped && (bms_is_empty(keys) || bms_is_member(attr->attnum, keys)))
			names = lappend(names, pstrdup(NameStr(attr->attname)));
	}
	return names;
}

static AttrNumber
attnum_by_name(TupleDesc desc, const char *name)
{
	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, a);

		if (!attr->attisdropped && strcmp(NameStr(attr->attname), name) == 0)
			return attr->attnum;
	}
	return InvalidAttrNumber;
}

/*
 * The "columns" option of entry's nearest partitioned ancestor that has
 * one, or NULL; entry then names that ancestor.  Its columns are looked
 * up by name in the partition, whose attribute numbers may differ.
 */
static ColumnSpec *
ancestor_columns(PluginData *data, RelationEntry *entry)
{
	ListCell   *lc;

	foreach(lc, get_partition_ancestors(entry->relid))
	{
		Oid			ancestor = lfirst_oid(lc);
		char	   *nspname = get_namespace_name(get_rel_namespace(ancestor));
		char	   *relname = get_rel_name(ancestor);
		ColumnSpec *spec;

		if (nspname == NULL || relname == NULL)
			continue;
		spec = cdc_find_columns(data->column_specs, nspname, relname);
		if (spec)
		{
			entry->emit_relid = ancestor;
			entry->nspname = nspname;
			entry->relname = relname;
			return spec;
		}
	}
	return NULL;
}

static void
build_entry(PluginData *data, RelationEntry *entry, Relation rel)
{
	Oid			flusso_nsp = get_namespace_oid("flusso", true);
	Publication *pub = GetPublicationByName(data->publication, true);
	TupleDesc	desc = RelationGetDescr(rel);
	MemoryContext old;
	ColumnSpec *spec;
	List	   *names;
	Bitmapset  *identity;
	int			i = -1;

	/* under the decoding context, so that it goes when decoding ends */
	if (entry->context)
		MemoryContextReset(entry->context);
	else
		entry->context = AllocSetContextCreate(data->context, "flusso relation",
											   ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(entry->context);

	entry->emit_relid = RelationGetRelid(rel);
	entry->nspname = get_namespace_name(RelationGetNamespace(rel));
	entry->relname = pstrdup(RelationGetRelationName(rel));
	spec = cdc_find_columns(data->column_specs, entry->nspname, entry->relname);
	if (spec == NULL && rel->rd_rel->relispartition)
		spec = ancestor_columns(data, entry);
	memset(&entry->actions, 0, sizeof(entry->actions));
	entry->emitted = false;
	if (OidIsValid(flusso_nsp) && RelationGetNamespace(rel) == flusso_nsp &&
		strcmp(RelationGetRelationName(rel), "signal") == 0)
	{
		entry->emitted = true;
		entry->actions.pubinsert = entry->actions.pubupdate = true;
		entry->actions.pubdelete = entry->actions.pubtruncate = true;
	}
	else if (pub && in_publication(pub, rel))
	{
		entry->emitted = true;
		entry->actions = pub->pubactions;
	}

	entry->identity_full = rel->rd_rel->relreplident == REPLICA_IDENTITY_FULL;
	entry->identity = NULL;
	identity = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_IDENTITY_KEY);
	while ((i = bms_next_member(identity, i)) >= 0)
		entry->identity = bms_add_member(entry->identity, i + FirstLowInvalidHeapAttributeNumber);

	entry->wanted = spec != NULL;
	names = spec ? spec->columns : default_columns(rel, entry);
	entry->ncolumns = list_length(names);
	entry->names = palloc(sizeof(char *) * Max(entry->ncolumns, 1));
	entry->attnums = palloc(sizeof(AttrNumber) * Max(entry->ncolumns, 1));
	entry->output = palloc0(sizeof(FmgrInfo) * Max(entry->ncolumns, 1));
	entry->types = palloc0(sizeof(Oid) * Max(entry->ncolumns, 1));
	for (int c = 0; c < entry->ncolumns; c++)
	{
		entry->names[c] = pstrdup(list_nth(names, c));
		entry->attnums[c] = attnum_by_name(desc, entry->names[c]);
		if (entry->attnums[c] != InvalidAttrNumber)
		{
			Oid			typoutput;
			bool		varlena;

			entry->types[c] = TupleDescAttr(desc, entry->attnums[c] - 1)->atttypid;
			getTypeOutputInfo(entry->types[c], &typoutput, &varlena);
			fmgr_info_cxt(typoutput, &entry->output[c], entry->context);
		}
	}
	{
		ThinChange	shape;

		memset(&shape, 0, sizeof(shape));
		shape.relid = entry->emit_relid;
		shape.nspname = entry->nspname;
		shape.relname = entry->relname;
		shape.ncolumns = entry->ncolumns;
		shape.columns = entry->names;
		initStringInfo(&entry->header_tail);
		thin_change_write_relation(&entry->header_tail, &shape);
	}
	MemoryContextSwitchTo(old);
	entry->valid = true;
}

static RelationEntry *
relation_entry(PluginData *data, Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	bool		found;
	RelationEntry *entry;

	/* dynahash entries never move, and invalidation only clears valid */
	if (last_entry && last_entry->relid == relid && last_entry->valid)
		return last_entry;
	entry = hash_search(relation_cache, &relid, HASH_ENTER, &found);
	if (!found)
	{
		entry->valid = false;
		entry->context = NULL;
	}
	if (!entry->valid)
		build_entry(data, entry, rel);
	last_entry = entry;
	return entry;
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
	entry = relation_entry(data, rel);
	if (entry->emitted)
		note_table(ctx, txn, entry, THIN_REWRITE);
	else if (entry->wanted)
		note_table(ctx, txn, entry, THIN_UNCOVERED);
	RelationClose(rel);
}

/*
 * An insert carries the new row, a delete the old row, an update both; the
 * old row only when the WAL logged one (a key change, or identity FULL).
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
	entry = relation_entry(data, relation);

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
		RelationEntry *entry = relation_entry(data, relations[i]);

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
 * A transaction was replayed: the relations its changes touched were
 * looked up as they were then, and stay so in this process's caches.  A
 * worker's next transaction starts from clean ones (util/xact.c).
 */
static void
plugin_commit(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr commit_lsn)
{
	xact_note_decoding();
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

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
#include "catalog/pg_publication.h"
#include "commands/defrem.h"
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

#include "cdc/thin_change.h"
#include "compat.h"

#define DEFAULT_PUBLICATION "flusso"

/* "schema.table:col,col" from the columns option */
typedef struct ColumnSpec
{
	char	   *nspname;
	char	   *relname;
	List	   *columns;
} ColumnSpec;

typedef struct PluginData
{
	MemoryContext change_context;	/* reset after every change */
	char	   *publication;
	List	   *column_specs;
} PluginData;

/* What the plugin knows about one relation, until it is invalidated. */
typedef struct RelationEntry
{
	Oid			relid;			/* hash key */
	bool		valid;
	bool		emitted;		/* published, or flusso.signal */
	PublicationActions actions;
	char	   *nspname;
	char	   *relname;
	int			ncolumns;
	char	  **names;
	AttrNumber *attnums;		/* InvalidAttrNumber: the column is gone */
	FmgrInfo   *output;			/* output function per column */
	bool		identity_full;
	Bitmapset  *identity;		/* attnums an old key tuple carries */
	MemoryContext context;		/* owns everything above */
} RelationEntry;

static HTAB *relation_cache = NULL;
static bool callbacks_registered = false;

void		_PG_output_plugin_init(OutputPluginCallbacks *cb);

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

static ColumnSpec *
parse_column_spec(const char *value)
{
	ColumnSpec *spec = palloc0(sizeof(ColumnSpec));
	char	   *copy = pstrdup(value);
	char	   *colon = strchr(copy, ':');
	char	   *dot = strchr(copy, '.');
	char	   *columns;

	if (colon == NULL || dot == NULL || dot > colon)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for flusso option \"columns\": \"%s\"", value),
				 errhint("Write schema.table:column,column.")));
	*dot = '\0';
	*colon = '\0';
	spec->nspname = copy;
	spec->relname = dot + 1;
	columns = pstrdup(colon + 1);
	if (!SplitIdentifierString(columns, ',', &spec->columns) || spec->columns == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid column list in flusso option \"columns\": \"%s\"", value)));
	return spec;
}

static void
plugin_startup(LogicalDecodingContext *ctx, OutputPluginOptions *opt, bool is_init)
{
	PluginData *data = palloc0(sizeof(PluginData));
	ListCell   *lc;
	HASHCTL		hash;

	data->change_context = AllocSetContextCreate(ctx->context, "flusso change",
												 ALLOCSET_DEFAULT_SIZES);
	data->publication = pstrdup(DEFAULT_PUBLICATION);
	opt->output_type = OUTPUT_PLUGIN_BINARY_OUTPUT;
	opt->receive_rewrites = false;
	ctx->output_plugin_private = data;

	foreach(lc, ctx->output_plugin_options)
	{
		DefElem    *elem = lfirst(lc);

		if (strcmp(elem->defname, "publication") == 0)
			data->publication = defGetString(elem);
		else if (strcmp(elem->defname, "columns") == 0)
			data->column_specs = lappend(data->column_specs,
										 parse_column_spec(defGetString(elem)));
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

static ColumnSpec *
find_column_spec(PluginData *data, const char *nspname, const char *relname)
{
	ListCell   *lc;

	foreach(lc, data->column_specs)
	{
		ColumnSpec *spec = lfirst(lc);

		if (strcmp(spec->nspname, nspname) == 0 && strcmp(spec->relname, relname) == 0)
			return spec;
	}
	return NULL;
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

	if (entry->context)
		MemoryContextReset(entry->context);
	else
		entry->context = AllocSetContextCreate(CacheMemoryContext, "flusso relation",
											   ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(entry->context);

	entry->nspname = get_namespace_name(RelationGetNamespace(rel));
	entry->relname = pstrdup(RelationGetRelationName(rel));
	memset(&entry->actions, 0, sizeof(entry->actions));
	entry->emitted = false;
	if (OidIsValid(flusso_nsp) && RelationGetNamespace(rel) == flusso_nsp &&
		strcmp(entry->relname, "signal") == 0)
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

	spec = find_column_spec(data, entry->nspname, entry->relname);
	names = spec ? spec->columns : default_columns(rel, entry);
	entry->ncolumns = list_length(names);
	entry->names = palloc(sizeof(char *) * Max(entry->ncolumns, 1));
	entry->attnums = palloc(sizeof(AttrNumber) * Max(entry->ncolumns, 1));
	entry->output = palloc0(sizeof(FmgrInfo) * Max(entry->ncolumns, 1));
	for (int c = 0; c < entry->ncolumns; c++)
	{
		entry->names[c] = pstrdup(list_nth(names, c));
		entry->attnums[c] = attnum_by_name(desc, entry->names[c]);
		if (entry->attnums[c] != InvalidAttrNumber)
		{
			Oid			typoutput;
			bool		varlena;

			getTypeOutputInfo(TupleDescAttr(desc, entry->attnums[c] - 1)->atttypid,
							  &typoutput, &varlena);
			fmgr_info_cxt(typoutput, &entry->output[c], entry->context);
		}
	}
	MemoryContextSwitchTo(old);
	entry->valid = true;
}

static RelationEntry *
relation_entry(PluginData *data, Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	bool		found;
	RelationEntry *entry = hash_search(relation_cache, &relid, HASH_ENTER, &found);

	if (!found)
	{
		entry->valid = false;
		entry->context = NULL;
	}
	if (!entry->valid)
		build_entry(data, entry, rel);
	return entry;
}

/* The emitted columns of one row version. */
static ThinValue *
row_values(RelationEntry *entry, Relation rel, HeapTuple tuple, bool is_old_key)
{
	TupleDesc	desc = RelationGetDescr(rel);
	ThinValue  *values = palloc0(sizeof(ThinValue) * Max(entry->ncolumns, 1));

	for (int c = 0; c < entry->ncolumns; c++)
	{
		AttrNumber	attnum = entry->attnums[c];
		Form_pg_attribute attr;
		bool		isnull;
		Datum		value;

		if (attnum == InvalidAttrNumber || attnum > desc->natts ||
			(is_old_key && !entry->identity_full && !bms_is_member(attnum, entry->identity)))
		{
			values[c].kind = THIN_MISSING;
			continue;
		}
		attr = TupleDescAttr(desc, attnum - 1);
		value = heap_getattr(tuple, attnum, desc, &isnull);
		if (isnull)
			values[c].kind = THIN_NULL;
		else if (attr->attlen == -1 && VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(value)))
			values[c].kind = THIN_UNCHANGED;
		else
		{
			values[c].kind = THIN_TEXT;
			values[c].text = OutputFunctionCall(&entry->output[c], value);
		}
	}
	return values;
}

static void
emit(LogicalDecodingContext *ctx, const ThinChange *change)
{
	OutputPluginPrepareWrite(ctx, true);
	thin_change_write(ctx->out, change);
	OutputPluginWrite(ctx, true);
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
	change->relid = entry->relid;
	change->nspname = entry->nspname;
	change->relname = entry->relname;
	change->ncolumns = entry->ncolumns;
	change->columns = entry->names;
}

static void
plugin_change(LogicalDecodingContext *ctx, ReorderBufferTXN *txn,
			  Relation relation, ReorderBufferChange *change)
{
	PluginData *data = ctx->output_plugin_private;
	RelationEntry *entry = relation_entry(data, relation);
	MemoryContext old;
	ThinChange	thin;
	bool		wanted = false;

	switch (change->action)
	{
		case REORDER_BUFFER_CHANGE_INSERT:
			wanted = entry->actions.pubinsert;
			break;
		case REORDER_BUFFER_CHANGE_UPDATE:
			wanted = entry->actions.pubupdate;
			break;
		case REORDER_BUFFER_CHANGE_DELETE:
			wanted = entry->actions.pubdelete;
			break;
		default:
			break;
	}
	if (!entry->emitted || !wanted)
		return;

	old = MemoryContextSwitchTo(data->change_context);
	switch (change->action)
	{
		case REORDER_BUFFER_CHANGE_INSERT:
			start_change(&thin, txn, entry, THIN_INSERT);
			break;
		case REORDER_BUFFER_CHANGE_UPDATE:
			start_change(&thin, txn, entry, THIN_UPDATE);
			break;
		default:
			start_change(&thin, txn, entry, THIN_DELETE);
			break;
	}
	if (change->data.tp.oldtuple)
		thin.old_values = row_values(entry, relation,
									 compat_change_tuple(change->data.tp.oldtuple),
									 !entry->identity_full);
	else if (change->action != REORDER_BUFFER_CHANGE_INSERT)
	{
		/* nothing was logged of the old row: say so, column by column */
		thin.old_values = palloc0(sizeof(ThinValue) * Max(entry->ncolumns, 1));
		for (int c = 0; c < entry->ncolumns; c++)
			thin.old_values[c].kind = THIN_MISSING;
	}
	if (change->data.tp.newtuple && change->action != REORDER_BUFFER_CHANGE_DELETE)
		thin.new_values = row_values(entry, relation,
									 compat_change_tuple(change->data.tp.newtuple), false);
	emit(ctx, &thin);
	MemoryContextSwitchTo(old);
	MemoryContextReset(data->change_context);
}

static void
plugin_truncate(LogicalDecodingContext *ctx, ReorderBufferTXN *txn,
				int nrelations, Relation relations[], ReorderBufferChange *change)
{
	PluginData *data = ctx->output_plugin_private;
	MemoryContext old = MemoryContextSwitchTo(data->change_context);

	for (int i = 0; i < nrelations; i++)
	{
		RelationEntry *entry = relation_entry(data, relations[i]);
		ThinChange	thin;

		if (!entry->emitted || !entry->actions.pubtruncate)
			continue;
		start_change(&thin, txn, entry, THIN_TRUNCATE);
		thin.ncolumns = 0;
		emit(ctx, &thin);
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(data->change_context);
}

/* Nothing is written for transaction boundaries. */
static void
plugin_begin(LogicalDecodingContext *ctx, ReorderBufferTXN *txn)
{
}

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

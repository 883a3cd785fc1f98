/*-------------------------------------------------------------------------
 *
 * relation_entry.c
 *	  The output plugin's cache of what it knows about each relation, as
 *	  pgoutput keeps its RelationSyncEntry: whether the relation is
 *	  published (directly, by schema or through an ancestor), which table
 *	  its records name (a partition's, the partitioned table a "columns"
 *	  option names), which columns are written and with which output
 *	  functions, and which columns the indexes read.  Entries are built
 *	  lazily, under the historic snapshot of the change being decoded, and
 *	  invalidated by relcache and publication syscache callbacks registered
 *	  once per process.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "cdc/options.h"
#include "cdc/relation_entry.h"
#include "cdc/thin_change.h"
#include "compat.h"

static HTAB *relation_cache = NULL;
static RelationEntry *last_entry = NULL;	/* consecutive changes share it */
static bool callbacks_registered = false;

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

/* A cache for one decoding context, whose memory context it lives in. */
void
relation_entries_create(MemoryContext context)
{
	HASHCTL		hash;

	memset(&hash, 0, sizeof(hash));
	hash.keysize = sizeof(Oid);
	hash.entrysize = sizeof(RelationEntry);
	hash.hcxt = context;
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

/* The decoding context, and the cache with it, is going away. */
void
relation_entries_forget(void)
{
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
ancestor_columns(const EmitRules *rules, RelationEntry *entry)
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
		spec = cdc_find_columns(rules->column_specs, nspname, relname);
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

/*
 * The columns the indexes read from entry's table (named after the table
 * its records name), as attnums of rel's own descriptor; unknown unless a
 * "reads" option names every one of them, and each is there and stored.
 */
static void
read_columns(const EmitRules *rules, RelationEntry *entry, TupleDesc desc)
{
	ColumnSpec *spec = cdc_find_columns(rules->read_specs, entry->nspname, entry->relname);
	ListCell   *lc;

	entry->reads = NULL;
	entry->reads_known = spec != NULL;
	foreach(lc, spec ? spec->columns : NIL)
	{
		AttrNumber	attnum = attnum_by_name(desc, lfirst(lc));

		if (attnum == InvalidAttrNumber ||
			compat_attr_is_virtual(TupleDescAttr(desc, attnum - 1)))
		{
			entry->reads_known = false;
			return;
		}
		entry->reads = bms_add_member(entry->reads, attnum);
	}
}

static void
build_entry(const EmitRules *rules, RelationEntry *entry, Relation rel)
{
	Oid			flusso_nsp = get_namespace_oid("flusso", true);
	Publication *pub = GetPublicationByName(rules->publication, true);
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
		entry->context = AllocSetContextCreate(rules->context, "flusso relation",
											   ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(entry->context);

	entry->emit_relid = RelationGetRelid(rel);
	entry->nspname = get_namespace_name(RelationGetNamespace(rel));
	entry->relname = pstrdup(RelationGetRelationName(rel));
	spec = cdc_find_columns(rules->column_specs, entry->nspname, entry->relname);
	if (spec == NULL && rel->rd_rel->relispartition)
		spec = ancestor_columns(rules, entry);
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

	read_columns(rules, entry, desc);
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

RelationEntry *
relation_entry(const EmitRules *rules, Relation rel)
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
		build_entry(rules, entry, rel);
	last_entry = entry;
	return entry;
}

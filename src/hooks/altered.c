/*-------------------------------------------------------------------------
 *
 * altered.c
 *	  DDL that changes what the rows of a table read as, or whether the WAL
 *	  carries their changes, without logging a row change.  The change
 *	  stream cannot see it, so every index it touches is compiled again
 *	  (phase error when it can no longer be built, as check says why) and
 *	  seeded again, as after a rewrite: an "altered" row in flusso.signal,
 *	  inserted in the transaction that made the change, reaches the worker
 *	  in stream order, after every change committed before it
 *	  (engine/signals.c).
 *
 * What the utility hook notes, after the statement ran:
 *	  - a column dropped or renamed (ALTER TABLE ... DROP COLUMN, RENAME
 *		COLUMN): an index reading a column of that name reads nothing now,
 *		or another column, perhaps one added in the same transaction with
 *		a default no row change carries;
 *	  - a table or partition made unlogged (SET UNLOGGED, CREATE UNLOGGED
 *		TABLE ... PARTITION OF, ATTACH PARTITION of an unlogged table): its
 *		changes leave the WAL, which check reports as an error
 *		(binding/logged.c);
 *	  - an enum label renamed (ALTER TYPE ... RENAME VALUE), or an
 *		attribute of a composite type (RENAME ATTRIBUTE): every column whose
 *		type holds it reads differently;
 *	  - a column's type changed without a rewrite to one that may render
 *		differently (timestamp to timestamptz, which PostgreSQL does without
 *		a rewrite when TimeZone is UTC): its type before the statement is
 *		noted as it starts.  A change between two string types (varchar to
 *		text) or between a domain and its base type renders alike, and
 *		needs nothing.
 * A rewrite (a type change that converts values, ADD COLUMN with a
 * volatile default) needs nothing here either: the output plugin sees it.
 *
 * The requests are inserted as the transaction is about to commit, as the
 * catalog's owner, so that a statement rolled back requests nothing; which
 * indexes a change touches is judged then, on the catalog as the
 * transaction leaves it, each index's tables walked as the index's owner
 * (the walk may run a type's input function, which must not run with the
 * rights of the role that altered the table).  An index the change left
 * unbuildable (the column it reads is gone) is asked for too, so that it
 * stops now rather than at its next change.  A database whose flusso
 * objects predate the request's kind cannot hold it: the session is
 * warned instead, and its DDL goes on.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_coerce.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "binding/ready.h"
#include "binding/tables.h"
#include "util/pinned.h"
#include "util/text_array.h"
#include "store/catalog_signal.h"
#include "store/catalog_index.h"
#include "hooks/altered.h"

/* What a statement of this transaction altered. */
typedef struct AlteredObject
{
	Oid			relid;			/* a table, or InvalidOid */
	char	   *column;			/* of it; NULL: the table as a whole */
	Oid			type;			/* or a type, when relid is invalid */
} AlteredObject;

/* A column whose type a statement is about to change, as it is. */
typedef struct RetypedColumn
{
	Oid			relid;
	char	   *column;
	Oid			type;
	List	   *files;			/* relfilenodes of relid and what is under it */
} RetypedColumn;

static List *altered = NIL;		/* AlteredObject, in TopTransactionContext */
static bool callback_registered = false;

/*
 * Does type hold target: is it target, or a domain, array, range or
 * composite type over something that holds it?
 */
static bool
type_holds(Oid type, Oid target)
{
	check_stack_depth();
	type = getBaseType(type);
	if (type == target)
		return true;
	if (OidIsValid(get_element_type(type)))
		return type_holds(get_element_type(type), target);
	if (type_is_range(type))
		return type_holds(get_range_subtype(type), target);
	if (type_is_multirange(type))
		return type_holds(get_multirange_range(type), target);
	if (type_is_rowtype(type) && type != RECORDOID)
	{
		TupleDesc	desc = lookup_rowtype_tupdesc(type, -1);
		bool		holds = false;

		for (int i = 0; i < desc->natts && !holds; i++)
		{
			Form_pg_attribute attr = TupleDescAttr(desc, i);

			holds = !attr->attisdropped && type_holds(attr->atttypid, target);
		}
		ReleaseTupleDesc(desc);
		return holds;
	}
	return false;
}

/* Does what the index reads of table, walked as broken or not, hold what? */
static bool
table_touched(const TableUse *table, bool broken, const AlteredObject *what)
{
	ListCell   *lc;

	if (OidIsValid(what->type))
	{
		foreach(lc, table->columns)
		{
			AttrNumber	attnum = get_attnum(table->relid, lfirst(lc));

			if (attnum != InvalidAttrNumber &&
				type_holds(get_atttype(table->relid, attnum), what->type))
				return true;
		}
		return false;
	}
	return what->relid == table->relid &&
		(what->column == NULL || broken || string_list_member(table->columns, what->column));
}

/* Did what this transaction altered touch the index? */
static bool
index_touched(const StoredIndex *index, List *objects)
{
	DiagnosticSink sink = {NIL, index->name};
	List	   *tables = bind_index_reads(index, &sink);
	bool		broken = false;
	ListCell   *lc;

	foreach(lc, sink.items)
		broken |= ((Diagnostic *) lfirst(lc))->severity == SEVERITY_ERROR;
	foreach(lc, tables)
	{
		ListCell   *oc;

		foreach(oc, objects)
		{
			if (table_touched(lfirst(lc), broken, lfirst(oc)))
				return true;
		}
	}
	return false;
}

/*
 * At commit, ask for a seed (a request of kind) of every index for which
 * touches(index, objects) holds: the DDL hooks' one way to have indexes
 * seeded again.
 */
void
altered_request_seeds_where(const char *kind,
							bool (*touches) (const StoredIndex *index, List *objects),
							List *objects)
{
	List	   *names = NIL;
	ListCell   *lc;

	if (!OidIsValid(get_extension_oid("flusso", true)))
		return;
	/* at commit, statements have ended: take a snapshot of our own */
	PushActiveSnapshot(GetTransactionSnapshot());
	foreach(lc, catalog_load_indexes())
	{
		StoredIndex *index = lfirst(lc);

		if (touches(index, objects))
			names = lappend(names, index->name);
	}
	catalog_request_seeds(kind, names);
	PopActiveSnapshot();
}

static void
request_seeds_at_commit(XactEvent event, void *arg)
{
	List	   *objects = altered;

	altered = NIL;
	if ((event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PRE_PREPARE) &&
		objects != NIL)
		altered_request_seeds_where(SIGNAL_ALTERED, index_touched, objects);
}

/* Note that relid (its column, when given) or type was altered. */
static void
note(Oid relid, const char *column, Oid type)
{
	MemoryContext old;
	AlteredObject *what;

	if (!OidIsValid(get_extension_oid("flusso", true)))
		return;
	if (!callback_registered)
	{
		RegisterXactCallback(request_seeds_at_commit, NULL);
		callback_registered = true;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	what = palloc0(sizeof(AlteredObject));
	what->relid = relid;
	what->column = column ? pstrdup(column) : NULL;
	what->type = type;
	altered = lappend(altered, what);
	MemoryContextSwitchTo(old);
}

/*
 * A column of relid was dropped or renamed, and so in every table under
 * it: an index may name a partition, or a table that inherits.
 */
static void
note_column(Oid relid, const char *column)
{
	ListCell   *lc;

	foreach(lc, find_all_inheritors(relid, NoLock, NULL))
		note(lfirst_oid(lc), column, InvalidOid);
}

/*
 * relid, which may be a partition, holds rows that changed without a trace
 * in the WAL, or may from now on: so does each partitioned table above it.
 */
static void
note_table(Oid relid)
{
	ListCell   *lc;

	note(relid, NULL, InvalidOid);
	if (!get_rel_relispartition(relid))
		return;
	foreach(lc, get_partition_ancestors(relid))
		note(lfirst_oid(lc), NULL, InvalidOid);
}

/* Is a table under relid (itself, or a partition at any depth) unlogged? */
static bool
holds_unlogged(Oid relid)
{
	ListCell   *lc;

	foreach(lc, find_all_inheritors(relid, NoLock, NULL))
	{
		if (get_rel_persistence(lfirst_oid(lc)) == RELPERSISTENCE_UNLOGGED)
			return true;
	}
	return false;
}

/*
 * The relfilenodes of relid and of every table under it: a rewrite gives
 * the ones it rewrote new ones.
 */
static List *
files_under(Oid relid)
{
	List	   *files = NIL;
	ListCell   *lc;

	foreach(lc, find_all_inheritors(relid, NoLock, NULL))
	{
		HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(lfirst_oid(lc)));

		if (!HeapTupleIsValid(tuple))
			continue;
		files = lappend_oid(files, ((Form_pg_class) GETSTRUCT(tuple))->relfilenode);
		ReleaseSysCache(tuple);
	}
	return files;
}

/* Do values of the two types read alike in a document? */
static bool
renders_alike(Oid before, Oid after)
{
	before = getBaseType(before);
	after = getBaseType(after);
	return before == after ||
		(TypeCategory(before) == TYPCATEGORY_STRING &&
		 TypeCategory(after) == TYPCATEGORY_STRING);
}

/* Columns retyped without a rewrite, to a type that reads differently. */
static void
note_retyped(List *retyped)
{
	ListCell   *lc;

	foreach(lc, retyped)
	{
		RetypedColumn *column = lfirst(lc);
		AttrNumber	attnum = get_attnum(column->relid, column->column);

		if (attnum == InvalidAttrNumber ||
			renders_alike(column->type, get_atttype(column->relid, attnum)) ||
			!equal(files_under(column->relid), column->files))
			continue;
		note_column(column->relid, column->column);
	}
}

static void
note_alter_table(AlterTableStmt *stmt)
{
	Oid			relid;
	ListCell   *lc;

	if (stmt->objtype != OBJECT_TABLE)
		return;
	relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!OidIsValid(relid))
		return;
	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst(lc);

		if (cmd->subtype == AT_DropColumn)
			note_column(relid, cmd->name);
		else if (cmd->subtype == AT_SetUnLogged)
			note_table(relid);
		else if (cmd->subtype == AT_AttachPartition)
		{
			Oid			partition = RangeVarGetRelid(((PartitionCmd *) cmd->def)->name,
													 NoLock, true);

			if (OidIsValid(partition) && holds_unlogged(partition))
				note_table(partition);
		}
	}
}

static void
note_rename(RenameStmt *stmt)
{
	Oid			relid;

	if (stmt->renameType != OBJECT_COLUMN && stmt->renameType != OBJECT_ATTRIBUTE)
		return;
	relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!OidIsValid(relid))
		return;
	if (stmt->renameType == OBJECT_ATTRIBUTE)
		note(InvalidOid, NULL, get_rel_type_id(relid));
	else
	{
		note_column(relid, stmt->subname);
		note_column(relid, stmt->newname);
	}
}

/*
 * Before a utility statement runs: the columns whose type it is to change,
 * as they are, for altered_note_statement().
 */
List *
altered_before_statement(Node *stmt)
{
	AlterTableStmt *alter = (AlterTableStmt *) stmt;
	List	   *retyped = NIL;
	Oid			relid = InvalidOid;
	ListCell   *lc;

	if (!IsA(stmt, AlterTableStmt) || alter->objtype != OBJECT_TABLE)
		return NIL;
	foreach(lc, alter->cmds)
	{
		AlterTableCmd *cmd = lfirst(lc);
		RetypedColumn *column;
		AttrNumber	attnum;

		if (cmd->subtype != AT_AlterColumnType)
			continue;
		if (!OidIsValid(relid))
		{
			relid = RangeVarGetRelid(alter->relation, NoLock, true);
			if (!OidIsValid(relid) || !OidIsValid(get_extension_oid("flusso", true)))
				return NIL;
		}
		attnum = get_attnum(relid, cmd->name);
		if (attnum == InvalidAttrNumber)
			continue;
		column = palloc(sizeof(RetypedColumn));
		column->relid = relid;
		column->column = pstrdup(cmd->name);
		column->type = get_atttype(relid, attnum);
		column->files = files_under(relid);
		retyped = lappend(retyped, column);
	}
	return retyped;
}

/*
 * After a utility statement ran: note what it altered; retyped is what
 * altered_before_statement() said of it.
 */
void
altered_note_statement(Node *stmt, List *retyped)
{
	note_retyped(retyped);
	if (IsA(stmt, AlterTableStmt))
		note_alter_table((AlterTableStmt *) stmt);
	else if (IsA(stmt, RenameStmt))
		note_rename((RenameStmt *) stmt);
	else if (IsA(stmt, AlterEnumStmt) && ((AlterEnumStmt *) stmt)->oldVal != NULL)
		note(InvalidOid, NULL,
			 typenameTypeId(NULL, makeTypeNameFromNameList(((AlterEnumStmt *) stmt)->typeName)));
	else if (IsA(stmt, CreateStmt) && ((CreateStmt *) stmt)->partbound != NULL)
	{
		Oid			relid = RangeVarGetRelid(((CreateStmt *) stmt)->relation, NoLock, true);

		if (OidIsValid(relid) && get_rel_persistence(relid) == RELPERSISTENCE_UNLOGGED)
			note_table(relid);
	}
}

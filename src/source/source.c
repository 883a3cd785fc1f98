/*-------------------------------------------------------------------------
 *
 * source.c
 *	  Which database flusso's state belongs to, and whether this database
 *	  is a copy of another one.
 *
 * A database's identity is a row of flusso.source: an id of its own, the
 * cluster's system identifier and the database's OID.  Every OpenSearch
 * index flusso creates records that identity in its _meta, and the
 * shipper writes only into indexes, and moves only aliases, that are its
 * own (shipper/generations.c).
 *
 * Everything that copies a database copies flusso's catalog with it, and
 * the copy would then ship into the same OpenSearch indexes and fight
 * over the same aliases: CREATE DATABASE ... TEMPLATE, a dump restored
 * (flusso.source is dumped with flusso's definitions), pg_upgrade (a new
 * system identifier).  Each leaves a row whose system identifier and
 * database OID are not this database's.  The worker claims the identity
 * when it starts and whenever it looks at the catalog: it gives the
 * database a row of its own if it has none, and once another row is
 * there, the database is a copy.  Then the other rows are folded into its
 * own (copied_from says what it was copied from), every index is seeded
 * again, and, when the database had no row of its own (the catalog is
 * the other database's), the generations, the queue and the rejected
 * documents of the other database are forgotten, in OpenSearch as they
 * are: they are not this database's to change.  Its own OpenSearch indexes
 * then carry its own identity; an alias the other database serves is not
 * taken (the shipper stops that index, and says so, until the server gets
 * an index_prefix of its own or flusso_adopt() is called).
 *
 * A physical copy (a restored base backup, a cloned volume, a promoted
 * standby) has the same system identifier, OID and catalog: it is the
 * same source, as a standby must be to take over.  Should two of them run
 * at once, the shipper does not fight over an alias (shipper/generations.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/timestamp.h"

#include "source/source.h"
#include "store/catalog_opensearch_digest.h"
#include "store/catalog_index.h"
#include "store/catalog_opensearch_generation.h"
#include "store/catalog_outbox.h"
#include "store/catalog_rejected.h"
#include "store/catalog_seed.h"
#include "store/catalog_sink.h"
#include "store/catalog_source.h"
#include "store/catalog_stream.h"

/* This cluster's system identifier, as pg_controldata prints it. */
static char *
system_identifier_text(void)
{
	return psprintf(UINT64_FORMAT, GetSystemIdentifier());
}

/* A database, in words, for messages. */
char *
source_describe(const char *system_identifier, const char *database_oid,
				const char *database_name)
{
	return psprintf("database \"%s\" (OID %s, system identifier %s)",
					database_name, database_oid, system_identifier);
}

static char *
describe_row(const SourceRow *row)
{
	return source_describe(row->system_identifier, psprintf("%u", row->database_oid),
						   row->database_name);
}

static bool
is_this_database(const SourceRow *row, const char *system_identifier)
{
	return row->database_oid == MyDatabaseId &&
		strcmp(row->system_identifier, system_identifier) == 0;
}

/* Fill identity from the rows: this database's, and the others'. */
static void
read_rows(List *rows, SourceIdentity *identity, SourceRow **mine, SourceRow **newest_other)
{
	char	   *system_identifier = system_identifier_text();
	ListCell   *lc;

	memset(identity, 0, sizeof(SourceIdentity));
	identity->system_identifier = system_identifier;
	identity->database_oid = MyDatabaseId;
	identity->database_name = get_database_name(MyDatabaseId);
	*mine = NULL;
	*newest_other = NULL;
	foreach(lc, rows)
	{
		SourceRow  *row = lfirst(lc);

		if (is_this_database(row, system_identifier))
			*mine = row;
		else
			*newest_other = row;	/* oldest first */
	}
	if (*mine)
	{
		identity->id = (*mine)->id;
		if ((*mine)->copied_database_oid)
			identity->copied_from = source_describe((*mine)->copied_system_identifier,
													(*mine)->copied_database_oid,
													(*mine)->copied_database_name);
	}
	if (*newest_other)
		identity->unclaimed = describe_row(*newest_other);
}

/*
 * What the catalog says, read-only, in the caller's transaction: this
 * database's identity (none yet when it was just copied, or installed
 * before the worker started) and a copy not taken in yet.  False when the
 * catalog predates 0.7.0: there is no identity.
 */
bool
source_look(SourceIdentity *identity)
{
	SourceRow  *mine;
	SourceRow  *other;

	if (!catalog_source_in_catalog())
	{
		memset(identity, 0, sizeof(SourceIdentity));
		return false;
	}
	read_rows(catalog_source_rows(), identity, &mine, &other);
	return true;
}

/* The copied_from of a copy of row, found now. */
static char *
copied_from_json(const SourceRow *row)
{
	StringInfoData json;

	initStringInfo(&json);
	appendStringInfoString(&json, "{\"id\": ");
	escape_json(&json, row->id);
	appendStringInfoString(&json, ", \"system_identifier\": ");
	escape_json(&json, row->system_identifier);
	appendStringInfo(&json, ", \"database_oid\": %u, \"database_name\": ", row->database_oid);
	escape_json(&json, row->database_name);
	appendStringInfoString(&json, ", \"detected_at\": ");
	escape_json(&json, timestamptz_to_str(GetCurrentTimestamp()));
	appendStringInfoChar(&json, '}');
	return json.data;
}

/*
 * This database is a copy of other: make the identity its own, and start
 * over.  inherited: the catalog is the other database's (this one had no
 * row): its generations, queue and rejected documents name the other's
 * OpenSearch indexes, and its slot record the other's slot.
 */
static void
take_in_copy(const SourceRow *mine, const SourceRow *other, bool inherited)
{
	catalog_source_fold(mine->id, copied_from_json(other));
	/* what the generations hold was written by the other database */
	if (digest_in_catalog())
		digest_forget_every();
	if (inherited)
	{
		generation_forget_every();
		outbox_forget_every();
		catalog_forget_every_rejected();
		catalog_forget_slot();
	}
	catalog_reset_shipping();
	catalog_mark_all_for_seeding();
	catalog_forget_all_seeds();
}

/*
 * Make sure this database has an identity, in the caller's transaction:
 * the worker's, as the catalog's owner.  True when the database was found
 * to be a copy now, and taken in (*copy_message says so, for the log and
 * flusso_status(), allocated in context); identity is what the catalog
 * says then.  Nothing is locked or written when the identity is in place.
 */
bool
source_claim(SourceIdentity *identity, MemoryContext context, char **copy_message)
{
	SourceRow  *mine;
	SourceRow  *other;
	bool		inherited = false;

	*copy_message = NULL;
	if (!catalog_source_in_catalog())
	{
		memset(identity, 0, sizeof(SourceIdentity));
		return false;
	}
	read_rows(catalog_source_rows(), identity, &mine, &other);
	if (mine != NULL && other == NULL &&
		strcmp(mine->database_name, identity->database_name) == 0)
		return false;

	/* one process claims at a time, and the next sees what it did */
	catalog_source_lock();
	read_rows(catalog_source_rows(), identity, &mine, &other);
	if (mine == NULL)
	{
		catalog_source_insert(identity->system_identifier, MyDatabaseId, identity->database_name);
		inherited = other != NULL;
		read_rows(catalog_source_rows(), identity, &mine, &other);
	}
	if (strcmp(mine->database_name, identity->database_name) != 0)
		catalog_source_rename(mine->id, identity->database_name);
	if (other == NULL)
		return false;

	*copy_message = MemoryContextStrdup(context, psprintf("database \"%s\" is a copy of %s: flusso gave it an identity of its own and seeds its indexes again; it ships only into OpenSearch indexes of its own, and leaves those of the database it was copied from as they are",
							 identity->database_name, describe_row(other)));
	take_in_copy(mine, other, inherited);
	read_rows(catalog_source_rows(), identity, &mine, &other);
	return true;
}

/*
 * The owner record flusso puts in the _meta of the OpenSearch indexes it
 * creates, as the value of "flusso": a JSON object.
 */
char *
source_meta_json(const SourceIdentity *identity)
{
	StringInfoData json;

	initStringInfo(&json);
	appendStringInfoString(&json, "{\"source\": ");
	escape_json(&json, identity->id);
	appendStringInfoString(&json, ", \"database\": ");
	escape_json(&json, identity->database_name);
	appendStringInfo(&json, ", \"database_oid\": \"%u\", \"system_identifier\": ", identity->database_oid);
	escape_json(&json, identity->system_identifier);
	appendStringInfoChar(&json, '}');
	return json.data;
}

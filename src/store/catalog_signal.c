/*-------------------------------------------------------------------------
 *
 * catalog_signal.c
 *	  flusso.signal: requests (a re-snapshot, whole or of some documents, a
 *	  retry, a seed a DDL change calls for) and a seed's watermarks,
 *	  inserted here and read by the stream in commit order
 *	  (engine/signals.c); every statement over the table, each written
 *	  once, as a verb, and the kinds of its rows.
 *
 * Each verb runs in the caller's role and transaction, in a SPI connection
 * of its own (nested in the caller's, if any); what it returns is
 * allocated in the caller's memory context.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/uuid.h"

#include "ipc/requests.h"
#include "store/catalog_signal.h"
#include "util/pinned.h"
#include "util/text_array.h"
#include "util/spi_run.h"

/*
 * Run a statement with up to two text arguments, $1 and $2, and kinds, a
 * NULL-terminated list of signal kinds, as a text[] after them.
 */
static void
run(const char *sql, int expected, const char *arg1, const char *arg2,
	const char *const *kinds)
{
	Oid			argtypes[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		values[3];
	int			nargs = 0;

	if (arg1)
		values[nargs++] = CStringGetTextDatum(arg1);
	if (arg2)
		values[nargs++] = CStringGetTextDatum(arg2);
	if (kinds)
	{
		int			n = 0;

		while (kinds[n])
			n++;
		argtypes[nargs] = TEXTARRAYOID;
		values[nargs++] = text_array_from_strings((char **) kinds, n);
	}
	(void) spi_run(sql, nargs, argtypes, values, expected);
}

/*
 * Insert a request of kind for index name, with what it is about (detail,
 * or NULL: flusso.signal has the column from 0.11.0 on); its id (a uuid).
 */
static void
read_uuid(HeapTuple tuple, TupleDesc desc, void *arg)
{
	bool		isnull;

	*(Datum *) arg = datumCopy(SPI_getbinval(tuple, desc, 1, &isnull), false, UUID_LEN);
}

static Datum
insert_request(const char *kind, const char *name, const char *detail)
{
	Oid			argtypes[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		values[3] = {CStringGetTextDatum(kind), CStringGetTextDatum(name),
	detail ? CStringGetTextDatum(detail) : (Datum) 0};
	Datum		id = (Datum) 0;

	(void) spi_read(detail
					  ? "INSERT INTO flusso.signal (kind, index_name, detail) VALUES ($1, $2, $3) RETURNING id"
					  : "INSERT INTO flusso.signal (kind, index_name) VALUES ($1, $2) RETURNING id",
					  detail ? 3 : 2, argtypes, values, false, 0, read_uuid, &id);
	return id;
}

/* Insert a request of kind for each index named. */
static void
insert_requests(const char *kind, List *names)
{
	char	  **array = palloc(sizeof(char *) * list_length(names));
	int			n = 0;
	Oid			argtypes[2] = {TEXTOID, TEXTARRAYOID};
	Datum		values[2];
	ListCell   *lc;

	foreach(lc, names)
		array[n++] = lfirst(lc);
	values[0] = CStringGetTextDatum(kind);
	values[1] = text_array_from_strings(array, n);
	(void) spi_run("INSERT INTO flusso.signal (kind, index_name) "
					 "SELECT $1, pg_catalog.unnest($2)",
					 2, argtypes, values, SPI_OK_INSERT);
}

/* Insert a watermark of kind for index name; its id, as text. */
char *
catalog_insert_watermark(const char *kind, const char *name)
{
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		values[2] = {CStringGetTextDatum(kind), CStringGetTextDatum(name)};
	List	   *ids = NIL;

	(void) spi_read("INSERT INTO flusso.signal (kind, index_name) VALUES ($1, $2) "
					  "RETURNING id::pg_catalog.text",
					  2, argtypes, values, false, 0, spi_read_text, &ids);
	return linitial(ids);
}

/* Forget the signal of this id, acted on. */
void
catalog_forget_signal(const char *id)
{
	run("DELETE FROM flusso.signal WHERE id::pg_catalog.text OPERATOR(pg_catalog.=) $1",
		SPI_OK_DELETE, id, NULL, NULL);
}

/* Forget the signal of this id if it is of one of kinds (NULL-terminated). */
void
catalog_forget_signal_of_kinds(const char *id, const char *const *kinds)
{
	run("DELETE FROM flusso.signal WHERE id::pg_catalog.text OPERATOR(pg_catalog.=) $1 "
		"AND kind OPERATOR(pg_catalog.=) ANY ($2)",
		SPI_OK_DELETE, id, NULL, kinds);
}

/* Forget the pair of watermarks of a chunk. */
void
catalog_forget_watermarks(const char *low, const char *high)
{
	run("DELETE FROM flusso.signal WHERE id::pg_catalog.text "
		"OPERATOR(pg_catalog.=) ANY (ARRAY[$1, $2])",
		SPI_OK_DELETE, low, high, NULL);
}

/* Forget every signal of one of kinds (NULL-terminated). */
void
catalog_forget_signals_of_kinds(const char *const *kinds)
{
	run("DELETE FROM flusso.signal WHERE kind OPERATOR(pg_catalog.=) ANY ($1)",
		SPI_OK_DELETE, NULL, NULL, kinds);
}

/* Forget every signal of index name. */
void
catalog_forget_signals(const char *name)
{
	run("DELETE FROM flusso.signal WHERE index_name OPERATOR(pg_catalog.=) $1",
		SPI_OK_DELETE, name, NULL, NULL);
}

/*
 * Forget the requests of one of kinds (NULL-terminated) that a seed of
 * index name answered: those that arrived before it started (flusso.seed
 * keeps when).
 */
void
catalog_forget_answered_signals(const char *name, const char *const *kinds)
{
	run("DELETE FROM flusso.signal WHERE kind OPERATOR(pg_catalog.=) ANY ($2) "
		"AND index_name OPERATOR(pg_catalog.=) $1 AND created_at OPERATOR(pg_catalog.<=) "
		"(SELECT started_at FROM flusso.seed WHERE index_name OPERATOR(pg_catalog.=) $1)",
		SPI_OK_DELETE, name, NULL, kinds);
}

/*
 * Insert a request of kind for index name, about detail (or NULL), as the
 * catalog's owner, in the caller's transaction, and have the worker look
 * at commit; the request's id.  The caller checked the rights of whoever
 * asked (api/resnapshot.c), or asks on flusso's own behalf: the shipper,
 * whose served OpenSearch index is gone, a definition that gained fields.
 */
Datum
catalog_request(const char *kind, const char *name, const char *detail)
{
	CatalogUser saved;
	Datum		id;

	catalog_become_owner(&saved);
	id = insert_request(kind, name, detail);
	catalog_restore_user(&saved);
	request_worker_at_commit(true);
	return id;
}

/*
 * Can the database's flusso.signal hold a request of kind?  Its objects
 * may be older than the library (ALTER EXTENSION flusso UPDATE not run
 * yet), and a row its CHECK rejects would fail the user's commit.
 */
static bool
kind_accepted(const char *kind)
{
	int			major = 0;
	int			minor = 0;
	List	   *versions = spi_read_texts("SELECT extversion FROM pg_catalog.pg_extension "
											"WHERE extname OPERATOR(pg_catalog.=) 'flusso'",
											0, NULL, NULL);
	char	   *version = versions != NIL ? linitial(versions) : NULL;
	bool		accepted = true;

	if (version == NULL || sscanf(version, "%d.%d", &major, &minor) != 2)
		accepted = false;
	else if (strcmp(kind, SIGNAL_ALTERED) == 0)
		accepted = major > 0 || minor >= 5;
	else if (strcmp(kind, SIGNAL_REPLACED) == 0)
		accepted = major > 0 || minor >= 7;
	else if (strcmp(kind, SIGNAL_PARTITIONS) == 0)
		accepted = major > 0 || minor >= 4;
	return accepted;
}

/*
 * Insert a request of kind for each index named, as the catalog's owner,
 * and have the worker look at commit: called as a transaction commits, by
 * the DDL hooks.  When the database's flusso objects cannot hold it, warn
 * instead.
 */
void
catalog_request_seeds(const char *kind, List *index_names)
{
	CatalogUser saved;
	ListCell   *lc;

	if (index_names == NIL)
		return;
	catalog_become_owner(&saved);
	if (!kind_accepted(kind))
	{
		catalog_restore_user(&saved);
		foreach(lc, index_names)
			ereport(WARNING,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("flusso index \"%s\" will not be seeded again after this change", (char *) lfirst(lc)),
					 errdetail("The flusso objects of this database predate the library, which needs them updated to record the request."),
					 errhint("Run ALTER EXTENSION flusso UPDATE, then SELECT flusso_resnapshot('%s').", (char *) lfirst(lc))));
		return;
	}
	insert_requests(kind, index_names);
	catalog_restore_user(&saved);
	request_worker_at_commit(true);
}

/* The kinds of a seed's watermarks, NULL-terminated. */
const char *const *
signal_watermark_kinds(void)
{
	static const char *const kinds[] = {SIGNAL_LOW, SIGNAL_HIGH, NULL};

	return kinds;
}

/*
 * The kinds of the requests a seed answers (asked for before it started),
 * NULL-terminated.
 */
const char *const *
signal_request_kinds(void)
{
	static const char *const kinds[] = {SIGNAL_RESNAPSHOT, SIGNAL_PARTITIONS, SIGNAL_ALTERED,
	SIGNAL_REPLACED, NULL};

	return kinds;
}

/*-------------------------------------------------------------------------
 *
 * stored_docs.c
 *	  The documents of a list of ids as the table sink stores them in the
 *	  current generation, flusso_docs.<index>: the one statement that reads
 *	  them, for the shipper (sink/opensearch_sink.c says when it ships what
 *	  the table sink holds rather than building the documents again).
 *
 * The table is locked (ACCESS SHARE) before it is read, and stays locked
 * until the caller's transaction ends: flusso_set_sinks() empties it with
 * TRUNCATE, and a seed's end drops it for the next generation, neither of
 * which an MVCC snapshot sees through.  So a caller that checks, after the
 * read and in the same transaction, that the table sink is on and serves
 * knows that what it read is what the table sink held.  The lock is only
 * tried: a transaction that emptied or replaces the table and has not
 * ended yet must not hold up the caller, which builds the documents
 * instead.  The caller runs this as the index's owner, who owns the
 * table.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "settings.h"
#include "store/stored_docs.h"
#include "util/spi_run.h"

/*
 * The documents of ids[0..n-1] into docs[0..n-1], as JSON text in the
 * caller's memory context, NULL for an id the table sink does not hold;
 * false (docs untouched) when index has no documents table, or it is
 * locked by a transaction that empties or replaces it.
 */
bool
stored_docs_read(const char *index, char **ids, int n, char **docs)
{
	List	   *read = NIL;
	ListCell   *lc;
	int			next = 0;
	Oid			relid;
	Datum	   *id_values = palloc(sizeof(Datum) * Max(n, 1));
	Oid			types[1] = {TEXTARRAYOID};
	Datum		values[1];

	relid = get_relname_relid(index, get_namespace_oid(FLUSSO_DOCS_SCHEMA, false));
	if (!OidIsValid(relid) || !ConditionalLockRelationOid(relid, AccessShareLock))
		return false;
	/* locked: the name still leads to it (the lock took in invalidations) */
	if (get_relname_relid(index, get_namespace_oid(FLUSSO_DOCS_SCHEMA, false)) != relid)
	{
		UnlockRelationOid(relid, AccessShareLock);
		return false;
	}
	for (int i = 0; i < n; i++)
		id_values[i] = CStringGetTextDatum(ids[i]);
	values[0] = PointerGetDatum(construct_array(id_values, n, TEXTOID, -1, false, TYPALIGN_INT));
	if (spi_read(psprintf("SELECT t.doc::pg_catalog.text "
							"FROM pg_catalog.unnest($1) WITH ORDINALITY u(id, n) "
							"LEFT JOIN %s t ON t.id OPERATOR(pg_catalog.=) u.id "
							"ORDER BY u.n",
							quote_qualified_identifier(FLUSSO_DOCS_SCHEMA, index)),
				   1, types, values, true, 0, spi_read_text, &read) != (uint64) n)
		elog(ERROR, "could not read the documents of index \"%s\"", index);
	foreach(lc, read)
		docs[next++] = lfirst(lc);
	return true;
}

/*-------------------------------------------------------------------------
 *
 * catalog_sink.c
 *	  flusso.sink, the sinks each index writes to (what they do is sink/'s),
 *	  with an OpenSearch sink's stop: every statement over the table, each
 *	  written once, as a verb.
 *
 * Each verb runs in the caller's role and transaction, in a SPI connection
 * of its own (util/spi_run.c); what it returns is allocated in the caller's
 * memory context.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "store/catalog_opensearch_generation.h"
#include "store/catalog_sink.h"
#include "store/catalog_source.h"
#include "util/spi_run.h"

static void
read_sink(HeapTuple tuple, TupleDesc desc, void *arg)
{
	List	  **rows = arg;
	SinkRow    *row = palloc0(sizeof(SinkRow));

	row->sink = SPI_getvalue(tuple, desc, 1);
	row->server_name = SPI_getvalue(tuple, desc, 2);
	row->options = SPI_getvalue(tuple, desc, 3);
	*rows = lappend(*rows, row);
}

/* The rows of index, by sink (read-only). */
List *
catalog_read_sinks(const char *index)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(index)};
	List	   *rows = NIL;

	(void) spi_read("SELECT sink, server_name, options::pg_catalog.text FROM flusso.sink "
					  "WHERE index_name OPERATOR(pg_catalog.=) $1 ORDER BY sink",
					  1, argtypes, values, true, 0, read_sink, &rows);
	return rows;
}

/*
 * The rows of index become: the table sink, when table; an OpenSearch sink
 * on server with options (jsonb text), when server is not NULL.
 */
void
catalog_replace_sinks(const char *index, bool table, const char *server, const char *options)
{
	Oid			types[4] = {TEXTOID, TEXTOID, TEXTOID, JSONBOID};
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};

	values[0] = CStringGetTextDatum(index);
	catalog_forget_sinks(index);
	for (int i = 0; i < 2; i++)
	{
		if ((i == 0 && !table) || (i == 1 && !server))
			continue;
		values[1] = CStringGetTextDatum(i == 0 ? "table" : "opensearch");
		values[2] = i == 0 ? (Datum) 0 : CStringGetTextDatum(server);
		nulls[2] = i == 0 ? 'n' : ' ';
		values[3] = DirectFunctionCall1(jsonb_in, CStringGetDatum(i == 0 ? "{}" : options));
		(void) spi_run_nulls("INSERT INTO flusso.sink (index_name, sink, server_name, options) "
							   "VALUES ($1, $2, $3, $4)",
							   4, types, values, nulls, SPI_OK_INSERT);
	}
}

/* Forget the sinks of index. */
void
catalog_forget_sinks(const char *index)
{
	(void) spi_run_text("DELETE FROM flusso.sink WHERE index_name OPERATOR(pg_catalog.=) $1",
						  index, NULL, SPI_OK_DELETE);
}

/*
 * An SQL expression of the sinks of the index named by index_column (an
 * expression of the statement it goes into): the engine's signature.
 */
char *
catalog_sinks_signature_sql(const char *index_column)
{
	return psprintf("(SELECT pg_catalog.string_agg(pg_catalog.concat_ws(':', s.sink, s.server_name, "
					"s.options::pg_catalog.text), ',' ORDER BY s.sink) FROM flusso.sink s "
					"WHERE s.index_name OPERATOR(pg_catalog.=) %s)", index_column);
}

/* Stop the shipping of index, for reason (on_error 'stop'). */
void
catalog_stop_shipping(const char *index, const char *reason)
{
	(void) spi_run_text("UPDATE flusso.sink SET stopped = $2 "
						  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
						  "AND sink OPERATOR(pg_catalog.=) 'opensearch'",
						  index, reason, SPI_OK_UPDATE);
}

/* Let a stopped index ship again. */
void
catalog_resume_shipping(const char *index)
{
	(void) spi_run_text("UPDATE flusso.sink SET stopped = NULL "
						  "WHERE index_name OPERATOR(pg_catalog.=) $1 "
						  "AND sink OPERATOR(pg_catalog.=) 'opensearch'",
						  index, NULL, SPI_OK_UPDATE);
}

/*
 * The shipping of index is stopped because its alias belongs to another
 * source: why (NULL: it no longer is).  Nothing is written when that is
 * what the row says already.
 */
void
catalog_set_conflict(const char *index, const char *reason)
{
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2];

	values[0] = CStringGetTextDatum(index);
	values[1] = reason ? CStringGetTextDatum(reason) : (Datum) 0;
	(void) spi_run_nulls("UPDATE flusso.sink SET conflict = $2 "
						   "WHERE index_name OPERATOR(pg_catalog.=) $1 "
						   "AND sink OPERATOR(pg_catalog.=) 'opensearch' "
						   "AND conflict IS DISTINCT FROM $2",
						   2, types, values, reason ? NULL : " n", SPI_OK_UPDATE);
}

/*
 * flusso_adopt(): the alias of index is to be taken over from whatever
 * source serves it (asked), or was (done).  False when index has no
 * OpenSearch sink.
 */
bool
catalog_take_alias(const char *index, bool asked)
{
	Oid			types[2] = {TEXTOID, BOOLOID};
	Datum		values[2] = {CStringGetTextDatum(index), BoolGetDatum(asked)};

	return spi_run("UPDATE flusso.sink SET take_alias = $2 "
					 "WHERE index_name OPERATOR(pg_catalog.=) $1 "
					 "AND sink OPERATOR(pg_catalog.=) 'opensearch'",
					 2, types, values, SPI_OK_UPDATE) > 0;
}

/*
 * A copy starts over: no sink is stopped, in conflict or taking an alias
 * over (what the database it was copied from recorded is not its own).
 */
void
catalog_reset_shipping(void)
{
	(void) spi_run("UPDATE flusso.sink SET stopped = NULL, conflict = NULL, take_alias = false "
					 "WHERE stopped IS NOT NULL OR conflict IS NOT NULL OR take_alias",
					 0, NULL, NULL, SPI_OK_UPDATE);
}

/* The conflict over an alias, when the catalog has it (0.7.0 on). */
static const char *
conflict_sql(void)
{
	return catalog_source_in_catalog() ? "s.conflict" : "NULL::pg_catalog.text";
}

/*
 * The documents a generation of s.index_name seeded by ranges has left to
 * ship, about: the root rows its seed estimated less the keys read so
 * far, at least 1 until every range is shipped.  0 before 0.6.0, when no
 * generation is seeded by ranges.
 */
static const char *
ranges_left_sql(void)
{
	if (!generation_ranges_in_catalog())
		return "0";
	return "COALESCE((SELECT pg_catalog.sum(GREATEST(COALESCE(g.ranges_estimate, 0) "
		"OPERATOR(pg_catalog.-) g.ranges_shipped, 1))::pg_catalog.int8 "
		"FROM flusso.opensearch_generation g "
		"WHERE g.index_name OPERATOR(pg_catalog.=) s.index_name "
		"AND g.ranges_version IS NOT NULL AND NOT g.ranges_done "
		"AND g.state OPERATOR(pg_catalog.<>) 'retired'), 0)";
}

static void
read_shipping(HeapTuple tuple, TupleDesc desc, void *arg)
{
	List	  **rows = arg;
	ShippingRow *row = palloc0(sizeof(ShippingRow));
	bool		isnull;
	Datum		oldest;

	row->index_name = SPI_getvalue(tuple, desc, 1);
	row->pending = DatumGetInt64(SPI_getbinval(tuple, desc, 2, &isnull));
	oldest = SPI_getbinval(tuple, desc, 3, &isnull);
	row->oldest_seconds = isnull ? -1 : DatumGetFloat8(oldest);
	row->rejected = DatumGetInt64(SPI_getbinval(tuple, desc, 4, &isnull));
	row->stopped = SPI_getvalue(tuple, desc, 5);
	row->conflict = SPI_getvalue(tuple, desc, 6);
	*rows = lappend(*rows, row);
}

/*
 * How every OpenSearch sink ships (read-only): documents to ship (rows
 * queued, and those a seed by ranges has left), the age of the oldest
 * row, documents rejected, the stop.
 */
List *
catalog_shipping_rows(void)
{
	List	   *rows = NIL;

	(void) spi_read(psprintf("SELECT s.index_name, "
							   "(SELECT pg_catalog.count(*) FROM flusso.outbox o "
							   " WHERE o.index_name OPERATOR(pg_catalog.=) s.index_name) "
							   "OPERATOR(pg_catalog.+) %s, "
							   "(SELECT EXTRACT(EPOCH FROM pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) "
							   "  pg_catalog.min(o.queued_at))::pg_catalog.float8 FROM flusso.outbox o "
							   " WHERE o.index_name OPERATOR(pg_catalog.=) s.index_name), "
							   "(SELECT pg_catalog.count(*) FROM flusso.rejected r "
							   " WHERE r.index_name OPERATOR(pg_catalog.=) s.index_name), "
							   "s.stopped, %s FROM flusso.sink s WHERE s.sink OPERATOR(pg_catalog.=) 'opensearch'",
							   ranges_left_sql(), conflict_sql()),
					  0, NULL, NULL, true, 0, read_shipping, &rows);
	return rows;
}

/*
 * How the OpenSearch sink of index ships (read-only): the stop and the
 * documents rejected only (and none queued).  False when index has no
 * OpenSearch sink.
 */
bool
catalog_shipping_row(const char *index, ShippingRow *row)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(index)};
	List	   *rows = NIL;

	memset(row, 0, sizeof(ShippingRow));
	if (spi_read(psprintf("SELECT s.index_name, 0::pg_catalog.int8, NULL::pg_catalog.float8, "
							"(SELECT pg_catalog.count(*) FROM flusso.rejected r "
							"WHERE r.index_name OPERATOR(pg_catalog.=) s.index_name), s.stopped, %s "
							"FROM flusso.sink s WHERE s.index_name OPERATOR(pg_catalog.=) $1 "
							"AND s.sink OPERATOR(pg_catalog.=) 'opensearch'",
							conflict_sql()),
				   1, types, values, true, 1, read_shipping, &rows) == 0)
		return false;
	*row = *(ShippingRow *) linitial(rows);
	return true;
}

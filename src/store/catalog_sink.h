/*-------------------------------------------------------------------------
 *
 * catalog_sink.h
 *	  flusso.sink, the sinks each index writes to: every statement over it,
 *	  as a verb.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_CATALOG_SINK_H
#define FLUSSO_STORE_CATALOG_SINK_H

#include "nodes/pg_list.h"

/* A row of flusso.sink. */
typedef struct SinkRow
{
	char	   *sink;			/* table or opensearch */
	char	   *server_name;
	char	   *options;		/* jsonb text */
} SinkRow;

/* How an OpenSearch sink ships, for flusso_status(). */
typedef struct ShippingRow
{
	char	   *index_name;
	int64		pending;		/* rows queued */
	double		oldest_seconds; /* age of the oldest, -1: none */
	int64		rejected;
	char	   *stopped;		/* why on_error 'stop' stopped it, or NULL */
	char	   *conflict;		/* why it does not ship: its alias is
								 * another database's; or NULL */
} ShippingRow;

extern List *catalog_read_sinks(const char *index);
extern void catalog_replace_sinks(const char *index, bool table, const char *server,
								  const char *options);
extern void catalog_forget_sinks(const char *index);
extern char *catalog_sinks_signature_sql(const char *index_column);
extern void catalog_stop_shipping(const char *index, const char *reason);
extern void catalog_resume_shipping(const char *index);
extern void catalog_set_conflict(const char *index, const char *reason);
extern bool catalog_take_alias(const char *index, bool asked);
extern void catalog_reset_shipping(void);
extern List *catalog_shipping_rows(void);
extern bool catalog_shipping_row(const char *index, ShippingRow *row);

#endif							/* FLUSSO_STORE_CATALOG_SINK_H */

/*-------------------------------------------------------------------------
 *
 * table_sink.h
 *	  The embedded sink: one table per index, flusso_docs.<index>.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SINK_TABLE_SINK_H
#define FLUSSO_SINK_TABLE_SINK_H

extern void sink_table_ensure(const char *index_name, Oid owner);
extern void sink_table_drop(const char *index_name);
extern char *sink_table_name(const char *index_name, bool shadow);
extern char *sink_table_write_sql(const char *index_name, bool shadow, const char *build_sql,
								  const char *search_expr, int ids_param);
extern void sink_shadow_create(const char *index_name, Oid owner);
extern bool sink_table_exists(const char *index_name, bool shadow);
extern void sink_shadow_drop(const char *index_name);
extern void sink_shadow_swap(const char *index_name);

#endif							/* FLUSSO_SINK_TABLE_SINK_H */

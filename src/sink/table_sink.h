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

#endif							/* FLUSSO_SINK_TABLE_SINK_H */

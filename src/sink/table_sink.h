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

#include "sink/sink.h"

extern const SinkOps table_sink_ops;

extern void table_sink_empty(const IndexSink *sink);

#endif							/* FLUSSO_SINK_TABLE_SINK_H */

/*-------------------------------------------------------------------------
 *
 * opensearch_sink.h
 *	  The OpenSearch sink: documents queued in flusso's catalog, in the
 *	  worker's transaction, for the shipper to send.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SINK_OPENSEARCH_SINK_H
#define FLUSSO_SINK_OPENSEARCH_SINK_H

#include "sink/sink.h"

extern const SinkOps opensearch_sink_ops;

extern int64 opensearch_sink_mirrored(const IndexSink *sink);
extern void opensearch_sink_set_options(const IndexSink *sink);

#endif							/* FLUSSO_SINK_OPENSEARCH_SINK_H */

/*-------------------------------------------------------------------------
 *
 * request.h
 *	  Requests that travel in stream order, asked for by flusso itself.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SNAPSHOT_REQUEST_H
#define FLUSSO_SNAPSHOT_REQUEST_H

extern void snap_request_reseed(const char *name);

#endif							/* FLUSSO_SNAPSHOT_REQUEST_H */

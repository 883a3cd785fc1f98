/*-------------------------------------------------------------------------
 *
 * requests.h
 *	  What SQL sessions and the worker ask of the launcher, the worker and
 *	  the shipper of their database, carried out when the transaction
 *	  commits.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_IPC_REQUESTS_H
#define FLUSSO_IPC_REQUESTS_H

extern void request_probe_at_commit(void);
extern void request_worker_at_commit(bool wanted);
extern void request_shipper_at_commit(void);
extern void request_shipping_at_commit(void);
extern void request_catalog_look_at_commit(void);
extern void request_listing_at_commit(void);

#endif							/* FLUSSO_IPC_REQUESTS_H */

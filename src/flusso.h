/*-------------------------------------------------------------------------
 *
 * flusso.h
 *	  Settings (flusso.* GUCs) shared across the library.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_H
#define FLUSSO_H

/* name of the publication that decides which tables are streamed */
extern char *flusso_publication;

/* replication slot of a database: flusso_<database oid> */
#define FLUSSO_SLOT_FORMAT "flusso_%u"

#endif							/* FLUSSO_H */

/*-------------------------------------------------------------------------
 *
 * settings.h
 *	  The flusso.* settings (settings.c), and the names of flusso's
 *	  schemas and slots, which every folder shares.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SETTINGS_H
#define FLUSSO_SETTINGS_H

extern void settings_define(void);

extern char *flusso_publication;
extern int	flusso_batch_size;
extern int	flusso_batch_timeout;
extern int	flusso_naptime;
extern int	flusso_slot_save_interval;
extern int	flusso_snapshot_chunk_size;
extern int	flusso_max_seeds;
extern int	flusso_work_mem;
extern int	flusso_max_build_delay;
extern int	flusso_max_transaction_duration;
extern int	flusso_build_timeout;
extern bool flusso_capture_log;
extern bool flusso_failover_slot;
extern int	flusso_max_databases;
#ifdef FLUSSO_TEST_HOOKS
extern char *flusso_test_crash_file;
extern char *flusso_test_crash_confirmed_file;
#endif

/* flusso's schemas: its state, the documents, the seeds' shadow tables */
#define FLUSSO_SCHEMA "flusso"
#define FLUSSO_DOCS_SCHEMA "flusso_docs"
#define FLUSSO_SEED_SCHEMA "flusso_seed"

/* replication slot of a database: flusso_<database oid> */
#define FLUSSO_SLOT_FORMAT "flusso_%u"

#endif							/* FLUSSO_SETTINGS_H */

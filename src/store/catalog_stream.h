/*-------------------------------------------------------------------------
 *
 * catalog_stream.h
 *	  flusso.stream, the record that the database's slot was made: every
 *	  statement over it, as a verb.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_CATALOG_STREAM_H
#define FLUSSO_STORE_CATALOG_STREAM_H

extern bool catalog_slot_recorded(void);
extern void catalog_record_slot(const char *slot_name);
extern void catalog_forget_slot(void);

#endif							/* FLUSSO_STORE_CATALOG_STREAM_H */

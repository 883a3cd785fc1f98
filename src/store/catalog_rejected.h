/*-------------------------------------------------------------------------
 *
 * catalog_rejected.h
 *	  flusso.rejected, the documents OpenSearch refused for good: every
 *	  statement over it, as a verb.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_CATALOG_REJECTED_H
#define FLUSSO_STORE_CATALOG_REJECTED_H

#include "nodes/execnodes.h"

extern int64 catalog_count_rejected(const char *index);
extern void catalog_list_rejected(const char *index, ReturnSetInfo *rsinfo);
extern void catalog_record_rejected(const char *index, const char *id, int64 version,
									int status, const char *error_type, const char *reason);
extern void catalog_forget_rejected(const char *index);
extern void catalog_forget_rejected_ids(const char *index, Datum ids);
extern void catalog_forget_every_rejected(void);

#endif							/* FLUSSO_STORE_CATALOG_REJECTED_H */

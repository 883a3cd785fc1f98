/*-------------------------------------------------------------------------
 *
 * catalog_opensearch_digest.h
 *	  flusso.opensearch_digest, what each OpenSearch generation holds as
 *	  flusso wrote it: every statement over it, as a verb.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_STORE_CATALOG_OPENSEARCH_DIGEST_H
#define FLUSSO_STORE_CATALOG_OPENSEARCH_DIGEST_H

extern bool digest_in_catalog(void);
extern int	digest_keep_held(Datum generations, Datum ids, Datum digests, int **held);
extern void digest_record(Datum generations, Datum ids, Datum digests);
extern void digest_forget_generation(int64 generation);
extern void digest_forget_ids(const char *index, Datum ids);
extern void digest_forget_every(void);

#endif							/* FLUSSO_STORE_CATALOG_OPENSEARCH_DIGEST_H */

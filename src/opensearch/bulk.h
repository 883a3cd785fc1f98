/*-------------------------------------------------------------------------
 *
 * bulk.h
 *	  The _bulk request: NDJSON items carrying external versions, and what
 *	  became of each item.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_OPENSEARCH_BULK_H
#define FLUSSO_OPENSEARCH_BULK_H

#include "lib/stringinfo.h"

typedef enum BulkOutcome
{
	BULK_DONE,					/* taken, or a newer version is there */
	BULK_RETRY,					/* 429, 5xx: trying again may help */
	BULK_REJECTED,				/* trying again cannot help */
	BULK_FOREIGN				/* a 409 for a version flusso never gave:
								 * rejected too */
} BulkOutcome;

typedef struct BulkItemResult
{
	BulkOutcome outcome;
	int			status;
	char	   *error_type;		/* NULL when none */
	char	   *reason;			/* may quote values: for the owner only */
} BulkItemResult;

extern void bulk_add_index(StringInfo buf, const char *index, const char *id, int64 version,
						   const char *doc);
extern void bulk_add_delete(StringInfo buf, const char *index, const char *id, int64 version);
extern bool bulk_read_response(const char *response, int nitems, const bool *deletes,
							   BulkItemResult *results, char **problem);

#endif							/* FLUSSO_OPENSEARCH_BULK_H */

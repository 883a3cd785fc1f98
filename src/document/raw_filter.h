/*-------------------------------------------------------------------------
 *
 * raw_filter.h
 *	  Whether a raw filter of a definition is one SQL expression.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_DOCUMENT_RAW_FILTER_H
#define FLUSSO_DOCUMENT_RAW_FILTER_H

extern char *doc_raw_filter_problem(const char *raw);
extern void doc_check_raw_filter(const char *raw, const char *path);

#endif							/* FLUSSO_DOCUMENT_RAW_FILTER_H */

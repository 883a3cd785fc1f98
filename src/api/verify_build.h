/*-------------------------------------------------------------------------
 *
 * verify_build.h
 *	  A fresh build of every document of an index, and the rows
 *	  flusso_verify() returns (verify_build.c).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_API_VERIFY_BUILD_H
#define FLUSSO_API_VERIFY_BUILD_H

#include "document/build.h"
#include "document/session.h"
#include "funcapi.h"
#include "store/catalog_index.h"

extern void verify_build_all(const StoredIndex *index, const DocumentQuery *q, const char *sql,
							 BuildSession *session);
extern void verify_emit(ReturnSetInfo *rsinfo, const char *id, const char *problem,
						const char *sink);

#endif							/* FLUSSO_API_VERIFY_BUILD_H */

/*-------------------------------------------------------------------------
 *
 * flusso.c
 *	  Entry point of the flusso library: module magic, settings, _PG_init.
 *
 * flusso is loaded through shared_preload_libraries.  _PG_init defines the
 * flusso.* settings and reserves the prefix, so that a misspelt flusso
 * setting in postgresql.conf is reported instead of silently ignored.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "flusso.h"

PG_MODULE_MAGIC;

char	   *flusso_publication = NULL;

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomStringVariable("flusso.publication",
							   "Publication whose tables flusso streams.",
							   "flusso_provision() creates it and adds every table an index reads.",
							   &flusso_publication,
							   "flusso",
							   PGC_SIGHUP,
							   0,
							   NULL, NULL, NULL);

	MarkGUCPrefixReserved("flusso");
}

/*-------------------------------------------------------------------------
 *
 * flusso.c
 *	  Entry point of the flusso library: module magic and _PG_init.
 *
 * flusso is loaded through shared_preload_libraries.  _PG_init reserves
 * the "flusso." settings prefix, so that a misspelt flusso setting in
 * postgresql.conf is reported instead of silently ignored.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	MarkGUCPrefixReserved("flusso");
}

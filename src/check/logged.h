/*-------------------------------------------------------------------------
 *
 * logged.h
 *	  Whether the rows an index reads are the rows the WAL follows.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_CHECK_LOGGED_H
#define FLUSSO_CHECK_LOGGED_H

#include "check/diagnostic.h"
#include "check/tables.h"

extern void check_logged(DiagnosticSink *sink, const TableUse *table);

#endif							/* FLUSSO_CHECK_LOGGED_H */

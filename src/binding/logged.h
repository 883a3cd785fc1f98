/*-------------------------------------------------------------------------
 *
 * logged.h
 *	  Whether the rows an index reads are the rows the WAL follows.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_BINDING_LOGGED_H
#define FLUSSO_BINDING_LOGGED_H

#include "binding/diagnostic.h"
#include "binding/tables.h"

extern void bind_logged(DiagnosticSink *sink, const TableUse *table);

#endif							/* FLUSSO_BINDING_LOGGED_H */

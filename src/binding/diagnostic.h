/*-------------------------------------------------------------------------
 *
 * diagnostic.h
 *	  One finding about a definition bound to the system catalogs, as flusso_check()
 *	  reports it: where, how serious, what and what to do.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_BINDING_DIAGNOSTIC_H
#define FLUSSO_BINDING_DIAGNOSTIC_H

#include "nodes/pg_list.h"

typedef enum Severity
{
	SEVERITY_ERROR,
	SEVERITY_WARNING,
	SEVERITY_INFO
} Severity;

typedef struct Diagnostic
{
	const char *index;			/* NULL for the environment */
	char	   *path;
	Severity	severity;
	char	   *message;
	char	   *hint;
} Diagnostic;

/* Where findings are collected, and for which index. */
typedef struct DiagnosticSink
{
	List	   *items;
	const char *index;
} DiagnosticSink;

extern void diag_add(DiagnosticSink *sink, Severity severity, const char *path,
					 const char *hint, const char *fmt,...) pg_attribute_printf(5, 6);
extern const char *severity_name(Severity severity);

#endif							/* FLUSSO_BINDING_DIAGNOSTIC_H */

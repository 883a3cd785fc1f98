/*-------------------------------------------------------------------------
 *
 * diagnostic.c
 *	  Collecting findings (the binding's walk, flusso_check()).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "schema/value.h"

#include "binding/diagnostic.h"

void
diag_add(DiagnosticSink *sink, Severity severity, const char *path,
		 const char *hint, const char *fmt,...)
{
	Diagnostic *diag = palloc0(sizeof(Diagnostic));
	va_list		args;

	va_start(args, fmt);
	diag->message = schema_vformat(fmt, args);
	va_end(args);
	diag->index = sink->index;
	diag->path = pstrdup(path ? path : "");
	diag->severity = severity;
	diag->hint = hint ? pstrdup(hint) : NULL;
	sink->items = lappend(sink->items, diag);
}

const char *
severity_name(Severity severity)
{
	switch (severity)
	{
		case SEVERITY_ERROR:
			return "error";
		case SEVERITY_WARNING:
			return "warning";
		case SEVERITY_INFO:
			return "info";
	}
	return "error";
}

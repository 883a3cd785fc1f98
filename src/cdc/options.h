/*-------------------------------------------------------------------------
 *
 * options.h
 *	  The options of flusso's output plugin: which publication, and which
 *	  columns each table emits.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_CDC_OPTIONS_H
#define FLUSSO_CDC_OPTIONS_H

#include "nodes/pg_list.h"

#define CDC_DEFAULT_PUBLICATION "flusso"

/* "schema.table:col,col": the columns one table emits */
typedef struct ColumnSpec
{
	char	   *nspname;
	char	   *relname;
	List	   *columns;		/* names, each once */
} ColumnSpec;

extern void cdc_columns_add(List **specs, const char *nspname, const char *relname,
							List *columns);
extern List *cdc_columns_forget(List *specs, const char *nspname, const char *relname);
extern List *cdc_plugin_options(const char *publication, List *specs, List *reads);
extern ColumnSpec *cdc_parse_columns(const char *option, const char *value);
extern ColumnSpec *cdc_find_columns(List *specs, const char *nspname, const char *relname);

#endif							/* FLUSSO_CDC_OPTIONS_H */

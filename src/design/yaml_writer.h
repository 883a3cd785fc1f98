/*-------------------------------------------------------------------------
 *
 * yaml_writer.h
 *	  A SchemaValue tree written as YAML by libyaml's emitter, after a block
 *	  of comment lines.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_DESIGN_YAML_WRITER_H
#define FLUSSO_DESIGN_YAML_WRITER_H

#include "nodes/pg_list.h"

#include "schema/value.h"

extern char *design_comment_text(const char *text);
extern char *design_yaml_text(const SchemaValue *document, List *comments);

#endif							/* FLUSSO_DESIGN_YAML_WRITER_H */

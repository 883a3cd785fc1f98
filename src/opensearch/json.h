/*-------------------------------------------------------------------------
 *
 * json.h
 *	  Reading OpenSearch's JSON responses: parsed into jsonb only once they
 *	  are known to be well formed and shallow enough, so that a garbled or
 *	  hostile response is a failed request, never an error raised from
 *	  inside a reply.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_OPENSEARCH_JSON_H
#define FLUSSO_OPENSEARCH_JSON_H

#include "utils/jsonb.h"

/*
 * How deep a response may nest.  OpenSearch's own answers nest a dozen
 * levels; a document's _source as deep as a jsonb value of it does, and
 * OpenSearch reads up to 1,000 levels.  PostgreSQL's recursive parsers
 * take that many well within the default max_stack_depth (2 MB).
 */
#define OS_JSON_MAX_DEPTH 1000

extern Jsonb *os_json_parse(const char *text);
extern Jsonb *os_json_read(const char *text, const char **problem);
extern JsonbContainer *os_json_object(JsonbContainer *object, const char *key);
extern char *os_json_text(JsonbContainer *object, const char *key);
extern bool os_json_number(JsonbContainer *object, const char *key, int64 *out);
extern char *os_json_error_type(const char *response);
extern char *os_json_error_reason(const char *response);

#endif							/* FLUSSO_OPENSEARCH_JSON_H */

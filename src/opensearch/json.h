/*-------------------------------------------------------------------------
 *
 * json.h
 *	  Reading OpenSearch's JSON responses: parsed into jsonb only once they
 *	  are known to be well formed, so that a garbled response is a failed
 *	  request, never an error raised from inside a reply.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_OPENSEARCH_JSON_H
#define FLUSSO_OPENSEARCH_JSON_H

#include "utils/jsonb.h"

extern Jsonb *os_json_parse(const char *text);
extern JsonbContainer *os_json_object(JsonbContainer *object, const char *key);
extern char *os_json_text(JsonbContainer *object, const char *key);
extern bool os_json_number(JsonbContainer *object, const char *key, int64 *out);
extern char *os_json_error_type(const char *response);

#endif							/* FLUSSO_OPENSEARCH_JSON_H */

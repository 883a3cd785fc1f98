/*-------------------------------------------------------------------------
 *
 * jsonapi_compat.h
 *	  Shims over the differences between PostgreSQL versions in the JSON
 *	  parser API, for the schema reader.  Frontend-safe: src/schema/
 *	  depends on nothing else in the tree (src/compat.h holds the backend
 *	  shims).
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_SCHEMA_JSONAPI_COMPAT_H
#define FLUSSO_SCHEMA_JSONAPI_COMPAT_H

#include "common/jsonapi.h"

/* jsonapi semantic actions return an error code from 16 on */
#if PG_VERSION_NUM >= 160000
typedef JsonParseErrorType json_action_result;
#define JSON_ACTION_DONE return JSON_SUCCESS
#else
typedef void json_action_result;
#define JSON_ACTION_DONE return
#endif

/* 17 lets the caller provide the lexer; we let it allocate one */
#if PG_VERSION_NUM >= 170000
#define compat_json_lex_context(json, len, encoding) \
	makeJsonLexContextCstringLen(NULL, (json), (len), (encoding), true)
#else
#define compat_json_lex_context(json, len, encoding) \
	makeJsonLexContextCstringLen((json), (len), (encoding), true)
#endif

#endif							/* FLUSSO_SCHEMA_JSONAPI_COMPAT_H */

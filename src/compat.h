/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Shims over the differences between the PostgreSQL versions flusso
 *	  builds against.  PostgreSQL 15 is tested; 16 to 18 are guarded here so
 *	  that they compile.  No other file tests PG_VERSION_NUM.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLUSSO_COMPAT_H
#define FLUSSO_COMPAT_H

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

#endif							/* FLUSSO_COMPAT_H */

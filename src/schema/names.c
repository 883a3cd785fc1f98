/*-------------------------------------------------------------------------
 *
 * names.c
 *	  The vocabulary of the schema format: type, join, aggregate and filter
 *	  names, the identifier rules, and "did you mean" suggestions.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#ifdef FRONTEND
#include "postgres_fe.h"
#else
#include "postgres.h"
#endif

#include <limits.h>

#include "schema/schema.h"
#include "schema/names.h"

/* indexed by ScalarType, NULL-terminated */
const char *const scalar_type_names[] = {
	"text", "identifier", "keyword", "enum", "uuid", "boolean", "short",
	"integer", "long", "float", "double", "decimal", "date", "timestamp",
	"binary", "json", NULL
};

static const char *const join_names[] = {
	"belongs_to", "has_one", "has_many", "many_to_many"
};

static const char *const aggregate_names[] = {
	"count", "sum", "avg", "min", "max", "ids"
};

/* indexed by FilterOp */
static const char *const filter_op_names[] = {
	"raw", "is_null", "is_not_null", "eq", "neq", "lt", "lte", "gt", "gte",
	"like", "ilike", "in", "not_in", "between"
};

/* every key that can name a field's type, in the order users read them */
const char *const field_type_keys[] = {
	"text", "identifier", "keyword", "enum", "uuid", "boolean", "short",
	"integer", "long", "float", "double", "decimal", "date", "timestamp",
	"binary", "json", "custom", "geo", "object", "map", "belongs_to",
	"has_one", "has_many", "many_to_many", "count", "sum", "avg", "min",
	"max", "ids", "constant", NULL
};

const char *
schema_type_name(ScalarType type)
{
	return scalar_type_names[type];
}

bool
schema_type_from_name(const char *name, ScalarType *type)
{
	for (int i = 0; scalar_type_names[i]; i++)
	{
		if (strcmp(name, scalar_type_names[i]) == 0)
		{
			*type = (ScalarType) i;
			return true;
		}
	}
	return false;
}

const char *
schema_join_name(JoinKind kind)
{
	return join_names[kind];
}

bool
schema_join_from_name(const char *name, JoinKind *kind)
{
	for (int i = 0; i < lengthof(join_names); i++)
	{
		if (strcmp(name, join_names[i]) == 0)
		{
			*kind = (JoinKind) i;
			return true;
		}
	}
	return false;
}

bool
schema_join_is_to_many(JoinKind kind)
{
	return kind == JOIN_HAS_MANY || kind == JOIN_MANY_TO_MANY;
}

const char *
schema_aggregate_name(AggregateKind kind)
{
	return aggregate_names[kind];
}

bool
schema_aggregate_from_name(const char *name, AggregateKind *kind)
{
	for (int i = 0; i < lengthof(aggregate_names); i++)
	{
		if (strcmp(name, aggregate_names[i]) == 0)
		{
			*kind = (AggregateKind) i;
			return true;
		}
	}
	return false;
}

const char *
schema_filter_op_name(FilterOp op)
{
	return filter_op_names[op];
}

/* Look up a comparison operator; "raw" is a key, not an operator. */
bool
schema_filter_op_from_name(const char *name, FilterOp *op)
{
	for (int i = FILTER_IS_NULL; i < lengthof(filter_op_names); i++)
	{
		if (strcmp(name, filter_op_names[i]) == 0)
		{
			*op = (FilterOp) i;
			return true;
		}
	}
	return false;
}

/* ^[a-z_][a-z0-9_]*$, at most 63 characters */
bool
schema_valid_identifier(const char *name)
{
	size_t		len = strlen(name);

	if (len == 0 || len > SCHEMA_MAX_NAME)
		return false;
	if (!((name[0] >= 'a' && name[0] <= 'z') || name[0] == '_'))
		return false;
	for (const char *p = name + 1; *p; p++)
	{
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	}
	return true;
}

/* ^[a-zA-Z_][a-zA-Z0-9_]*$, at most 63 characters */
bool
schema_valid_field_name(const char *name)
{
	size_t		len = strlen(name);

	if (len == 0 || len > SCHEMA_MAX_NAME)
		return false;
	for (const char *p = name; *p; p++)
	{
		bool		letter = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_';

		if (!letter && (p == name || !(*p >= '0' && *p <= '9')))
			return false;
	}
	return true;
}

/* Levenshtein distance, for short names only. */
static int
edit_distance(const char *a, const char *b)
{
	int			la = strlen(a);
	int			lb = strlen(b);
	int		   *row;
	int			result;

	if (la > 64 || lb > 64)
		return INT_MAX;
	row = palloc(sizeof(int) * (lb + 1));
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++)
	{
		int			diagonal = row[0];

		row[0] = i;
		for (int j = 1; j <= lb; j++)
		{
			int			above = row[j];
			int			best = Min(row[j] + 1, row[j - 1] + 1);

			row[j] = Min(best, diagonal + (a[i - 1] != b[j - 1]));
			diagonal = above;
		}
	}
	result = row[lb];
	pfree(row);
	return result;
}

/*
 * The candidate closest to word, if it is a likely typo (at most two edits
 * away); NULL otherwise.  candidates ends with NULL.
 */
const char *
schema_suggest(const char *word, const char *const *candidates)
{
	const char *best = NULL;
	int			best_distance = 3;

	for (; *candidates; candidates++)
	{
		int			distance = edit_distance(word, *candidates);

		if (distance > 0 && distance < best_distance)
		{
			best = *candidates;
			best_distance = distance;
		}
	}
	return best;
}

/* "a, b, c" */
char *
schema_join_words(const char *const *words)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; words[i]; i++)
		appendStringInfo(&buf, "%s%s", i > 0 ? ", " : "", words[i]);
	return buf.data;
}

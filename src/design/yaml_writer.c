/*-------------------------------------------------------------------------
 *
 * yaml_writer.c
 *	  Writes a SchemaValue tree as YAML with libyaml's emitter, after a
 *	  block of comment lines: the only way text built from the system catalogs
 *	  becomes a definition (flusso_draft).
 *
 * Nothing here splices a name into YAML by hand.  Every scalar is an event
 * given to the emitter: a string is written plain only when it is an
 * identifier that no YAML schema reads as anything but that string, and
 * double-quoted otherwise, and the emitter is told the output is ASCII
 * (yaml_emitter_set_unicode(0)), so it escapes every character that is
 * not printable ASCII, the line breaks YAML knows beyond \n and \r
 * (U+0085, U+2028, U+2029) included.  A name therefore reads back as
 * exactly itself and can never end the scalar it is in.
 *
 * libyaml has no comment events, so comments come first, as a block of
 * lines.  design_comment_text() makes any text safe for one: it keeps
 * printable ASCII and escapes everything else, so no character of a name
 * can end the comment line and start YAML of its own.  design_yaml_text()
 * refuses a comment that was not made so.
 *
 * Copyright (c) 2026, flusso developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <yaml.h>

#include "mb/pg_wchar.h"
#include "miscadmin.h"

#include "design/yaml_writer.h"

/* the text as one comment line: printable ASCII, the rest escaped */
char *
design_comment_text(const char *text)
{
	StringInfoData buf;
	bool		utf8 = (GetDatabaseEncoding() == PG_UTF8);
	const unsigned char *p = (const unsigned char *) text;

	initStringInfo(&buf);
	while (*p)
	{
		int			len = utf8 ? pg_utf_mblen(p) : 1;

		if (*p >= 0x20 && *p < 0x7f && *p != '\\')
			appendStringInfoChar(&buf, (char) *p);
		else if (*p == '\\')
			appendStringInfoString(&buf, "\\\\");
		else if (*p >= 0x80 && len > 1 && pg_utf8_islegal(p, len))
		{
			pg_wchar	c = utf8_to_unicode(p);

			appendStringInfo(&buf, c > 0xFFFF ? "\\U%08X" : "\\u%04X", c);
			p += len;
			continue;
		}
		else
			appendStringInfo(&buf, "\\x%02X", *p);
		p++;
	}
	return buf.data;
}

static bool
comment_is_safe(const char *line)
{
	for (const char *p = line; *p; p++)
	{
		if (*p < 0x20 || *p >= 0x7f)
			return false;
	}
	return true;
}

/*
 * Can s be written plain and read back as this string?  Identifiers only,
 * and none that YAML 1.1 or 1.2 reads as a null or a boolean.
 */
static bool
plain_string(const char *s)
{
	static const char *const words[] = {
		"null", "true", "false", "yes", "no", "on", "off", "y", "n"
	};

	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
		return false;
	for (const char *p = s; *p; p++)
	{
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			  (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	}
	for (int i = 0; i < lengthof(words); i++)
	{
		if (pg_strcasecmp(s, words[i]) == 0)
			return false;
	}
	return true;
}

/* libyaml's output handler: append to the StringInfo it was given */
static int
append_output(void *data, unsigned char *buffer, size_t size)
{
	appendBinaryStringInfo((StringInfo) data, (const char *) buffer, (int) size);
	return 1;
}

static void
emit(yaml_emitter_t *emitter, yaml_event_t *event, bool initialized)
{
	if (!initialized)
		ereport(ERROR,
				(errcode(ERRCODE_CHARACTER_NOT_IN_REPERTOIRE),
				 errmsg("a name in the draft cannot be written as UTF-8")));
	if (!yaml_emitter_emit(emitter, event))
		elog(ERROR, "could not write the draft as YAML: %s",
			 emitter->problem ? emitter->problem : "unknown error");
}

static void
emit_scalar(yaml_emitter_t *emitter, const SchemaValue *value)
{
	yaml_event_t event;
	const char *text = value->str;
	bool		plain = true;

	if (value->kind == SV_NULL)
		text = "null";
	else if (value->kind == SV_STRING)
	{
		plain = plain_string(text);
		text = pg_server_to_any(text, strlen(text), PG_UTF8);
	}
	emit(emitter, &event,
		 yaml_scalar_event_initialize(&event, NULL, NULL,
									  (yaml_char_t *) text, (int) strlen(text),
									  plain, !plain,
									  plain ? YAML_PLAIN_SCALAR_STYLE
									  : YAML_DOUBLE_QUOTED_SCALAR_STYLE));
}

/* a sequence of scalars only (variants, a composite key) reads best in flow style */
static bool
scalars_only(const SchemaValue *sequence)
{
	for (int i = 0; i < sequence->nitems; i++)
	{
		if (sequence->items[i]->kind == SV_SEQUENCE || sequence->items[i]->kind == SV_MAPPING)
			return false;
	}
	return true;
}

static void
emit_value(yaml_emitter_t *emitter, const SchemaValue *value)
{
	yaml_event_t event;

	check_stack_depth();
	switch (value->kind)
	{
		case SV_SEQUENCE:
			emit(emitter, &event,
				 yaml_sequence_start_event_initialize(&event, NULL, NULL, 1,
													  scalars_only(value) ? YAML_FLOW_SEQUENCE_STYLE
													  : YAML_BLOCK_SEQUENCE_STYLE));
			for (int i = 0; i < value->nitems; i++)
				emit_value(emitter, value->items[i]);
			emit(emitter, &event, yaml_sequence_end_event_initialize(&event));
			break;
		case SV_MAPPING:
			emit(emitter, &event,
				 yaml_mapping_start_event_initialize(&event, NULL, NULL, 1,
													 YAML_BLOCK_MAPPING_STYLE));
			for (int i = 0; i < value->nitems; i++)
			{
				SchemaValue key = {.kind = SV_STRING,.str = value->keys[i]};

				emit_scalar(emitter, &key);
				emit_value(emitter, value->items[i]);
			}
			emit(emitter, &event, yaml_mapping_end_event_initialize(&event));
			break;
		default:
			emit_scalar(emitter, value);
			break;
	}
}

/*
 * The comment lines, each behind "# ", then the document.  The emitter's
 * own allocations are freed whatever happens.
 */
char *
design_yaml_text(const SchemaValue *document, List *comments)
{
	StringInfoData out;
	yaml_emitter_t emitter;
	yaml_event_t event;
	ListCell   *lc;

	initStringInfo(&out);
	foreach(lc, comments)
	{
		const char *line = lfirst(lc);

		if (!comment_is_safe(line))
			elog(ERROR, "a draft comment must be printable ASCII: \"%s\"",
				 design_comment_text(line));
		appendStringInfo(&out, line[0] ? "# %s\n" : "#\n", line);
	}

	if (!yaml_emitter_initialize(&emitter))
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	PG_TRY();
	{
		yaml_emitter_set_output(&emitter, append_output, &out);
		yaml_emitter_set_encoding(&emitter, YAML_UTF8_ENCODING);
		yaml_emitter_set_unicode(&emitter, 0);
		yaml_emitter_set_indent(&emitter, 2);
		yaml_emitter_set_width(&emitter, -1);

		emit(&emitter, &event,
			 yaml_stream_start_event_initialize(&event, YAML_UTF8_ENCODING));
		emit(&emitter, &event,
			 yaml_document_start_event_initialize(&event, NULL, NULL, NULL, 1));
		emit_value(&emitter, document);
		emit(&emitter, &event, yaml_document_end_event_initialize(&event, 1));
		emit(&emitter, &event, yaml_stream_end_event_initialize(&event));
	}
	PG_FINALLY();
	{
		yaml_emitter_delete(&emitter);
	}
	PG_END_TRY();
	return out.data;
}

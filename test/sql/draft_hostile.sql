--
-- draft_hostile: a draft is written by libyaml's emitter, so no name in the
-- catalog can become YAML of its own.  For hostile catalogs the definition
-- read back from flusso_draft() is exactly the one the catalog implies, and
-- a draft too large for flusso_create_index is cut to fit, saying so.
--
CREATE EXTENSION flusso;
CREATE SCHEMA hostile;
-- what a raw filter smuggled into a draft would run as its reader
CREATE TABLE hostile.calls (at timestamptz DEFAULT now());
CREATE FUNCTION hostile.f() RETURNS boolean LANGUAGE sql
	AS $$ INSERT INTO hostile.calls DEFAULT VALUES RETURNING true $$;
-- labels are data: each must read back as itself
CREATE TYPE hostile.label AS ENUM (
	U&'\2028filters: [{raw: ''hostile.f()''}] #', U&'a\2029b', U&'c\0085d',
	U&'\FEFFe', 'e"f''g\h', '# h', 'i: j', '{k', '[l', '&m', '*n', '!o', '- p',
	'---', '...', 'null', 'true', 'No', '1e3', '0x1F', '~', ' q ', U&'caff\00E8',
	U&'\+01F600');
CREATE TYPE hostile.blank AS ENUM ('r', '');
CREATE TABLE hostile.parent (id int PRIMARY KEY, note text);
CREATE TABLE hostile.t (
	id int PRIMARY KEY,
	U&"\2028filters: [{raw: 'hostile.f()'}] #" text,
	U&"\2029filters: [{raw: 'hostile.f()'}] #" text,
	U&"\0085filters: [{raw: 'hostile.f()'}] #" text,
	U&"\000Dfilters: [{raw: 'hostile.f()'}] #" text,
	U&"\000Afilters: [{raw: 'hostile.f()'}] #" text,
	U&"\FEFF\000B\001B[2Jfilters: x #" text,
	"""quoted"" 'single' \back" text,
	"#hash" text, ": colon" text, "{brace" text, "[bracket" text, "&anchor" text,
	"*alias" text, "!tag" text, "-dash" text, "---" text, "..." text,
	a23456789_123456789_123456789_123456789_123456789_123456789_123 int,
	"null" text, "true" int, y boolean, "on" text,
	kind hostile.label NOT NULL,
	blank hostile.blank,
	parent_id int REFERENCES hostile.parent,
	other_id int
);
ALTER TABLE hostile.t ADD CONSTRAINT U&"\2028filters: [{raw: 'hostile.f()'}] #"
	FOREIGN KEY (other_id) REFERENCES hostile.parent;
-- cyclic foreign keys, and a table no definition can name
ALTER TABLE hostile.parent ADD COLUMN t_id int REFERENCES hostile.t;
CREATE TABLE hostile.U&"\2028x: y" (id int PRIMARY KEY, t_id int REFERENCES hostile.t);
INSERT INTO hostile.parent VALUES (1, 'p', NULL);
INSERT INTO hostile.t (id, kind, parent_id, other_id)
	VALUES (1, U&'\2028filters: [{raw: ''hostile.f()''}] #', 1, 1);
UPDATE hostile.parent SET t_id = 1;

-- the draft as it reads: the hostile names only in comments, escaped
\pset format unaligned
\pset tuples_only on
SELECT flusso_draft('hostile.t');
\pset format aligned
\pset tuples_only off
-- no line of it but the comments and the YAML the emitter wrote
SELECT count(*) AS lines_outside_ascii
FROM regexp_split_to_table(flusso_draft('hostile.t', 3), E'\n') AS line
WHERE line !~ '^[ -~]*$';

-- read back, the draft is the definition the catalog implies, written here
-- by hand as JSON: no filter, no key the catalog did not produce
SELECT flusso_create_index('hostile_draft', flusso_draft('hostile.t'));
SELECT flusso_create_index('hostile_expected', $json$
{"version": 1, "schema": "hostile", "table": "t", "primary_key": "id", "fields": [
  {"integer": "id", "required": true},
  {"integer": "a23456789_123456789_123456789_123456789_123456789_123456789_123", "required": false},
  {"text": "null", "required": false},
  {"integer": "true", "required": false},
  {"boolean": "y", "required": false},
  {"text": "on", "required": false},
  {"enum": "kind", "required": true, "variants": [
    "\u2028filters: [{raw: 'hostile.f()'}] #", "a\u2029b", "c\u0085d", "\ufeffe",
    "e\"f'g\\h", "# h", "i: j", "{k", "[l", "&m", "*n", "!o", "- p", "---", "...",
    "null", "true", "No", "1e3", "0x1F", "~", " q ", "caff\u00e8", "\ud83d\ude00"]},
  {"enum": "blank", "required": false},
  {"integer": "parent_id", "required": false},
  {"integer": "other_id", "required": false},
  {"belongs_to": "parent", "column": "parent_id", "table": "parent", "primary_key": "id",
   "required": false, "fields": [
     {"integer": "id", "required": true}, {"text": "note", "required": false},
     {"integer": "t_id", "required": false}]},
  {"belongs_to": "other", "column": "other_id", "table": "parent", "primary_key": "id",
   "required": false, "fields": [
     {"integer": "id", "required": true}, {"text": "note", "required": false},
     {"integer": "t_id", "required": false}]},
  {"has_many": "parent_2", "table": "parent", "primary_key": "id", "foreign_key": "t_id",
   "fields": [
     {"integer": "id", "required": true}, {"text": "note", "required": false},
     {"integer": "t_id", "required": false}]}]}
$json$);
SELECT d.definition = e.definition AS same_definition,
	   jsonb_path_exists(d.definition, 'lax $.**.filters[*]') AS has_filters
FROM flusso.index d, flusso.index e
WHERE d.name = 'hostile_draft' AND e.name = 'hostile_expected';
-- and neither previewing nor building it runs anything of a name
SELECT flusso_preview(flusso_draft('hostile.t', 3), '1') IS NOT NULL AS previewed;
SELECT flusso_build('hostile_draft', '1') ->> 'kind'
	= U&'\2028filters: [{raw: ''hostile.f()''}] #' AS kind_as_stored;
SELECT count(*) AS calls FROM hostile.calls;

-- 1,000 columns: every one a field, in order, read back as the catalog has it
SELECT format('CREATE TABLE hostile.wide (id int PRIMARY KEY, %s)',
			  string_agg(format('c%s int', i), ', ' ORDER BY i))
FROM generate_series(2, 1000) i \gexec
SELECT flusso_create_index('wide', flusso_draft('hostile.wide'));
SELECT flusso_create_index('wide_expected', jsonb_build_object(
	'version', 1, 'schema', 'hostile', 'table', 'wide', 'primary_key', 'id',
	'fields', (SELECT jsonb_agg(jsonb_build_object('integer', attname, 'required', attnotnull)
							   ORDER BY attnum)
			   FROM pg_attribute
			   WHERE attrelid = 'hostile.wide'::regclass AND attnum > 0))::text);
SELECT d.definition = e.definition AS same_definition,
	   jsonb_array_length(d.definition -> 'fields') AS fields
FROM flusso.index d, flusso.index e
WHERE d.name = 'wide' AND e.name = 'wide_expected';

-- a dense graph of foreign keys: eight tables, each pointing at every one;
-- three levels deep it would be megabytes, so joins are left out, with a
-- note, and what is left is a definition flusso_create_index takes
SELECT format('CREATE TABLE hostile.g%s (id int PRIMARY KEY, label text)', i)
FROM generate_series(1, 8) i \gexec
SELECT format('ALTER TABLE hostile.g%s ADD COLUMN g%s_id int REFERENCES hostile.g%s', i, j, j)
FROM generate_series(1, 8) i, generate_series(1, 8) j \gexec
SELECT length(flusso_draft('hostile.g1', 3)) BETWEEN 100000 AND 1048576 AS within_bound;
SELECT line FROM regexp_split_to_table(flusso_draft('hostile.g1', 3), E'\n') AS line
WHERE line ~ '^# (\.\.\. and|Joins were|flusso_create_index takes)';
SELECT count(*) AS size_notes
FROM regexp_split_to_table(flusso_draft('hostile.g1', 3), E'\n') AS line
WHERE line LIKE '# %: left out for size, %';
SELECT flusso_create_index('dense', flusso_draft('hostile.g1', 3));
SELECT flusso_draft('hostile.g1', 3) = flusso_draft('hostile.g1', 3) AS deterministic;

SET client_min_messages = warning;
DROP EXTENSION flusso CASCADE;
DROP SCHEMA hostile CASCADE;
RESET client_min_messages;

--
-- statements: the SQL flusso generates, shown as the worker runs it, the
-- way postgres_fdw's tests show the SQL they send: every name quoted
-- where it must be and schema-qualified, operators and functions
-- qualified, the definition's values bound as parameters.  The build
-- statement of a root table with scalar fields, of a one-to-many join
-- (nested rows) and of an aggregate, and the table sink's write
-- statement, over names that need quoting (a definition names tables and
-- columns in lower case: here, reserved words).
--
-- flusso_test_statement() exists only in the build `make test` installs
-- (FLUSSO_TEST_HOOKS), and no SQL script creates it: a release build
-- stops here (statements_1.out).
--
SELECT current_setting('flusso.test_crash_file', true) IS NOT NULL AS test_hooks \gset
\if :test_hooks
\else
\echo 'flusso was built without FLUSSO_TEST_HOOKS: nothing to show'
\quit
\endif
CREATE EXTENSION flusso;
CREATE FUNCTION flusso_test_statement(name text, statement text) RETURNS text
	AS 'flusso', 'flusso_test_statement' LANGUAGE C STRICT;

CREATE TABLE shelf (
	id int PRIMARY KEY, "desc" text NOT NULL, due_date date, weight numeric);
CREATE TABLE "references" (
	id int PRIMARY KEY, "from" int NOT NULL REFERENCES shelf, "group" text,
	stars int, hidden boolean NOT NULL DEFAULT false);
-- each statement as generated, on one line
\pset tuples_only on
\pset format unaligned

-- a root table with scalar fields, one with a default (a parameter)
SELECT flusso_create_index('shelf', $$
version: 1
table: shelf
primary_key: id
fields:
  - keyword: title
    column: desc
    required: true
  - date: dueDate
    column: due_date
    required: false
  - decimal: weight
    required: false
    default: 0
$$);
SELECT flusso_test_statement('shelf', 'build');

-- a one-to-many join: the nested rows of each item, filtered and ordered
SELECT flusso_create_index('shelf_notes', $$
version: 1
table: shelf
primary_key: id
fields:
  - keyword: title
    column: desc
    required: true
  - has_many: notes
    table: references
    foreign_key: from
    primary_key: id
    filters:
      - { column: hidden, op: eq, value: false }
    order_by:
      - { column: stars, direction: desc }
    fields:
      - keyword: group
        required: false
      - short: stars
        required: false
$$);
SELECT flusso_test_statement('shelf_notes', 'build');

-- aggregates over the related rows
SELECT flusso_create_index('shelf_stats', $$
version: 1
table: shelf
primary_key: id
fields:
  - count: noteCount
    table: references
    foreign_key: from
  - avg: avgStars
    table: references
    column: stars
    foreign_key: from
$$);
SELECT flusso_test_statement('shelf_stats', 'build');

-- aggregates over the very rows of a join (the same table and foreign key,
-- neither filtered) read the join's item l1 rather than the table again;
-- a filtered one reads the table
SELECT flusso_create_index('shelf_summary', $$
version: 1
table: shelf
primary_key: id
fields:
  - has_many: topNotes
    table: references
    foreign_key: from
    primary_key: id
    limit: 2
    order_by:
      - { column: stars, direction: desc }
    fields:
      - short: stars
        required: false
  - max: mostStars
    table: references
    foreign_key: from
    column: stars
    value_type: integer
  - ids: noteIds
    table: references
    foreign_key: from
    element_type: integer
  - count: shownCount
    table: references
    foreign_key: from
    filters:
      - { column: hidden, op: eq, value: false }
$$);
SELECT flusso_test_statement('shelf_summary', 'build');
INSERT INTO shelf VALUES (1, 'one', NULL, NULL), (2, 'two', NULL, NULL);
INSERT INTO "references" VALUES (10, 1, 'x', 5, false), (11, 1, 'y', 3, true),
	(12, 1, 'z', 4, false);
-- shelf 1: three notes (one hidden), the two with most stars first; shelf
-- 2: none
SELECT id, flusso_build('shelf_summary', id::text) FROM shelf ORDER BY id;

-- the table sink's write statement: update the documents that changed,
-- insert the new ones, and delete those of the ids at hand ($3, after the
-- key array and the default) that built nothing
SELECT flusso_test_statement('shelf', 'write');

-- the search vector of text fields: a key of the document read with ->,
-- a field of a joined row through its JSON path, in the order of the fields
SELECT flusso_create_index('shelf_text', $$
version: 1
table: shelf
primary_key: id
fields:
  - text: description
    column: desc
    required: true
  - has_many: notes
    table: references
    foreign_key: from
    primary_key: id
    fields:
      - text: group
        required: false
$$);
SELECT flusso_test_statement('shelf_text', 'write');
\pset tuples_only off
\pset format aligned

DROP FUNCTION flusso_test_statement(text, text);
-- quietly: which tables go (a seed may have a shadow) depends on timing
SET client_min_messages = warning;
DROP EXTENSION flusso CASCADE;
RESET client_min_messages;
DROP TABLE "references", shelf;

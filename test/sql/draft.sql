--
-- draft: flusso_draft() writes a starting definition from the catalog;
-- flusso_preview() and flusso_mapping() take a definition not created.
-- The draft of every fixture table is created unchanged and checks clean.
--
CREATE EXTENSION flusso;
\getenv abs_srcdir PG_ABS_SRCDIR
\set fixtures :abs_srcdir '/fixtures/'
\i :fixtures/schema.sql
\i :fixtures/seed.sql
UPDATE books SET updated_at = '2024-07-01 12:00:00+00';

-- What the fixture leaves out: an enum, types no field reads, a name that
-- is no identifier, a self-reference, a unique foreign key (has_one), a
-- composite foreign key, a junction between rows of one table, and a
-- table in another schema than the root's.
CREATE SCHEMA design;
CREATE SCHEMA design_extra;
CREATE TYPE design.mood AS ENUM ('low', 'high', 'null', 'so-so');
CREATE TABLE design.people (
	id         int PRIMARY KEY,
	"Name"     text,
	mood       design.mood NOT NULL DEFAULT 'low',
	home       point,
	manager_id int REFERENCES design.people,
	nicknames  varchar(20)[] NOT NULL DEFAULT '{}',
	during     interval
);
CREATE TABLE design.pairs (a int, b int, PRIMARY KEY (a, b));
CREATE TABLE design.badges (
	id        int PRIMARY KEY,
	person_id int NOT NULL UNIQUE REFERENCES design.people,
	pair_a    int,
	pair_b    int,
	FOREIGN KEY (pair_a, pair_b) REFERENCES design.pairs
);
CREATE TABLE design.friends (
	person_id int REFERENCES design.people,
	friend_id int REFERENCES design.people,
	since     date,
	PRIMARY KEY (person_id, friend_id)
);
CREATE TABLE design_extra.tags (
	id        bigint PRIMARY KEY,
	person_id int NOT NULL REFERENCES design.people,
	label     char(8) NOT NULL
);
INSERT INTO design.people VALUES (1, 'Ann', 'high', NULL, NULL, '{annie}'), (2, 'Bob', 'low', NULL, 1, '{}');
INSERT INTO design.friends VALUES (1, 2, '2024-01-01');
INSERT INTO design.badges VALUES (1, 2, NULL, NULL);
INSERT INTO design_extra.tags VALUES (1, 2, 'new');
CREATE VIEW book_titles AS SELECT id, title FROM books;
CREATE SEQUENCE design.counter;

-- the drafts, as they read (one level of foreign keys, the default)
\pset format unaligned
\pset tuples_only on
SELECT flusso_draft('books');
SELECT flusso_draft('publishers');
SELECT flusso_draft('authors');
SELECT flusso_draft('book_authors');
SELECT flusso_draft('reviews');
SELECT flusso_draft('loans');
SELECT flusso_draft('"references"');
SELECT flusso_draft('design.people');
SELECT flusso_draft('design.badges');
SELECT flusso_draft('design.pairs');
SELECT flusso_draft('design_extra.tags');
-- the table's own columns only; and two levels
SELECT flusso_draft('books', 0);
SELECT flusso_draft('authors', depth => 2);
\pset format aligned
\pset tuples_only off

-- every draft is created as it is, and checks clean once provisioned
SELECT name, flusso_create_index(name, flusso_draft(t, d))
FROM (VALUES ('books_0', 'books', 0), ('books_1', 'books', 1), ('books_3', 'books', 3),
			 ('publishers', 'publishers', 1), ('authors_1', 'authors', 1),
			 ('authors_2', 'authors', 2), ('book_authors', 'book_authors', 1),
			 ('reviews', 'reviews', 1), ('loans', 'loans', 1),
			 ('references', '"references"', 1), ('people_1', 'design.people', 1),
			 ('people_3', 'design.people', 3), ('badges', 'design.badges', 1),
			 ('friends', 'design.friends', 1), ('pairs', 'design.pairs', 1),
			 ('tags', 'design_extra.tags', 2)) v(name, t, d)
ORDER BY name;
SELECT count(*) FROM flusso_indexes;
-- provisioned, what remains is the indexes on the columns joins read by,
-- which the fixture leaves out (a foreign key has none of its own)
SELECT action FROM flusso_provision()
WHERE NOT applied AND action NOT LIKE 'replication slot %';
SELECT index, path, severity, message FROM flusso_check()
WHERE path NOT IN ('slot', 'worker') ORDER BY index, path, message;
-- built as the warnings say, the drafts check clean
SELECT sql FROM flusso_provision() WHERE action LIKE 'index %' \gexec
SELECT count(*) AS not_applied FROM flusso_provision()
WHERE NOT applied AND action NOT LIKE 'replication slot %';
SELECT index, path, severity, message FROM flusso_check()
WHERE path NOT IN ('slot', 'worker') ORDER BY index, path;

-- a definition not created: its document and mapping are those of the
-- same definition once created
\set definition `cat :fixtures/books.schema.yml`
SELECT jsonb_pretty(flusso_preview(:'definition', '1'));
SELECT flusso_create_index('books', :'definition');
SELECT id, flusso_preview(:'definition', id::text) IS NOT DISTINCT FROM flusso_build('books', id::text) AS same
FROM books ORDER BY id;
SELECT flusso_mapping(:'definition') = flusso_mapping('books') AS same_mapping;
SELECT jsonb_pretty(flusso_mapping(flusso_draft('design.people', 0)) -> 'mappings');
-- a key that builds nothing, and the draft's own previews
SELECT flusso_preview(:'definition', '99') IS NULL AS missing;
SELECT flusso_preview(flusso_draft('design.people'), '2');
SELECT flusso_preview(flusso_draft('book_authors', 0), '4:1');

-- errors
SELECT flusso_draft('book_titles');
SELECT flusso_draft('design.counter');
SELECT flusso_draft('books', -1);
SELECT flusso_draft('books', 4);
SELECT flusso_preview('version: 1
table: books
fields:
  - text: title
    requird: true', '1');
SELECT flusso_mapping('{"version": 1, "table": ');
SELECT flusso_mapping('no_such_index');
SELECT flusso_preview(flusso_draft('book_authors', 0), '4');
SELECT flusso_preview(replace(:'definition', 'table: loans', 'table: lones'), '1');

-- a preview reads with the caller's rights, checked before any row is read
CREATE ROLE regress_flusso_designer IN ROLE flusso_admin;
SET ROLE regress_flusso_designer;
SELECT flusso_draft('books', 0) IS NOT NULL AS drafted_from_the_catalog;
SELECT flusso_preview(:'definition', '1');
SELECT flusso_mapping(:'definition') = flusso_mapping('books') AS mapping_reads_no_table;
RESET ROLE;
GRANT SELECT ON books, publishers, authors, book_authors, reviews, loans TO regress_flusso_designer;
GRANT SELECT (id, book_id, "order") ON "references" TO regress_flusso_designer;
SET ROLE regress_flusso_designer;
SELECT flusso_preview(:'definition', '1');
RESET ROLE;
GRANT SELECT ON "references" TO regress_flusso_designer;
SET ROLE regress_flusso_designer;
SELECT flusso_preview(:'definition', '1') AS doc \gset
RESET ROLE;
SELECT :'doc'::jsonb = flusso_build('books', '1') AS same;
-- the functions are flusso_admin's
CREATE ROLE regress_flusso_outsider;
SET ROLE regress_flusso_outsider;
SELECT flusso_draft('books');
SELECT flusso_preview(:'definition', '1');
RESET ROLE;
DROP PUBLICATION flusso;
-- quietly: which tables go (a seed may have a shadow) depends on timing
SET client_min_messages = warning;
DROP EXTENSION flusso CASCADE;
DROP SCHEMA design, design_extra CASCADE;
RESET client_min_messages;
DROP VIEW book_titles;
DROP TABLE "references", loans, reviews, book_authors, books, authors, publishers;
DROP ROLE regress_flusso_designer, regress_flusso_outsider;

--
-- build: flusso_build() previews documents from the current rows: every
-- field kind and join verb on the library fixture, typed JSON values, a
-- composite key, an object wider than jsonb_build_object's limit, quoted
-- names, and the keys that build nothing.
--
CREATE EXTENSION flusso;
\getenv abs_srcdir PG_ABS_SRCDIR
\set fixtures :abs_srcdir '/fixtures/'
\i :fixtures/schema.sql
\i :fixtures/seed.sql
UPDATE books SET updated_at = '2024-07-01 12:00:00+00';

SELECT flusso_create_index('books', pg_read_file(:'fixtures' || 'books.schema.yml'));
SELECT flusso_create_index('authors', pg_read_file(:'fixtures' || 'authors.schema.json'));

SELECT jsonb_pretty(flusso_build('books', '1'));
SELECT id, flusso_build('books', id::text) FROM books WHERE id > 1 ORDER BY id;
SELECT id, flusso_build('authors', id::text) FROM authors ORDER BY id;

-- soft delete, a missing row and the root filter build nothing
UPDATE books SET withdrawn = true WHERE id = 3;
SELECT flusso_build('books', '3') IS NULL AS withdrawn, flusso_build('books', '99') IS NULL AS missing,
       flusso_build('authors', '4') IS NULL AS anonymous_filtered_out;

-- every value type, as JSON of its own type
CREATE TABLE kinds (
	id int PRIMARY KEY, t text, i2 smallint, i8 bigint, f4 real, f8 double precision,
	n numeric(10, 3), m money, b boolean, d date, ts timestamp, tz timestamptz,
	tm time, by bytea, j json, jb jsonb, u uuid, arr int[], tags text[],
	lat double precision, lon double precision, spot jsonb, labels jsonb);
INSERT INTO kinds VALUES (1, 'Text', 2, 9007199254740993, 1.5, 0.1, 12.345, 12.5, true,
	'2024-02-29', '2024-02-29 13:14:15.5', '2024-02-29 13:14:15+02', '13:14:15',
	'\x00ff10'::bytea, '{"a": [1, 2]}', '{"b": null}', '00000000-0000-0000-0000-0000000000aa',
	'{1,2,3}', '{x,y}', 45.5, 9.25, '{"lat": 1, "lon": 2}', '{"en": "hello", "it": "ciao"}');
INSERT INTO kinds (id) VALUES (2);
SELECT flusso_create_index('kinds', $$
version: 1
table: kinds
primary_key: id
fields:
  - text: t
    required: false
    transforms: [lowercase]
    default: none
  - short: i2
    required: false
  - long: i8
    required: false
  - float: f4
    required: false
  - double: f8
    required: false
  - decimal: n
    required: false
  - decimal: m
    required: false
  - boolean: b
    required: false
    default: false
  - date: d
    required: false
  - timestamp: ts
    required: false
  - timestamp: tz
    required: false
  - timestamp: tm
    required: false
  - binary: by
    required: false
  - json: j
    required: false
  - json: jb
    required: false
  - uuid: u
    required: false
  - integer: arr
    required: false
  - keyword: tags
    required: false
  - geo: point
    lat: lat
    lon: lon
    required: false
  - geo: spot
    required: false
  - map: labels
    values: text
    required: false
  - custom: price
    column: n
    postgres: [numeric]
    opensearch: scaled_float
    required: false
  - constant: s
    value: book
  - constant: nums
    value: [1, 2.5]
  - constant: yes_
    value: true
  - constant: nothing
    value: null
  - object: nested
    fields:
      - integer: id
        required: true
$$);
SELECT jsonb_pretty(flusso_build('kinds', '1'));
SELECT flusso_build('kinds', '2');

-- a composite key: the id joins the key values with ':'
SELECT flusso_create_index('pairs', $$
version: 1
table: book_authors
primary_key: [book_id, author_id]
fields:
  - integer: position
    required: true
  - belongs_to: author
    column: author_id
    table: authors
    primary_key: id
    fields: [ { identifier: name, required: true } ]
$$);
SELECT flusso_build('pairs', '4:1');
SELECT flusso_build('pairs', '4');

-- a composite id escapes ':' and '\' inside its values, so two keys never
-- share one: ('x:y', 'z') is x\:y:z and ('x', 'y:z') is x:y\:z
CREATE TABLE colons (a text, b text, label text NOT NULL, PRIMARY KEY (a, b));
INSERT INTO colons VALUES ('x:y', 'z', 'first'), ('x', 'y:z', 'second'),
	('back\slash', ':', 'third'), ('plain', 'key', 'fourth');
SELECT flusso_create_index('colons', $$
version: 1
table: colons
primary_key: [a, b]
fields: [ { keyword: label, required: true } ]
$$);
SELECT flusso_build('colons', 'x\:y:z') ->> 'label' AS first,
       flusso_build('colons', 'x:y\:z') ->> 'label' AS second,
       flusso_build('colons', 'back\\slash:\:') ->> 'label' AS third,
       flusso_build('colons', 'plain:key') ->> 'label' AS fourth;
SELECT flusso_build('colons', 'x:y:z');
SELECT flusso_build('colons', 'trailing\');
SELECT flusso_drop_index('colons');
DROP TABLE colons;

-- wider than jsonb_build_object's 100 arguments
SELECT flusso_create_index('wide', 'version: 1
table: kinds
primary_key: id
fields:
' || string_agg(format('  - constant: c%s%s    value: %s%s', i, chr(10), i, chr(10)), '') || '  - integer: id
    required: true
')
FROM generate_series(1, 120) i;
SELECT (SELECT count(*) FROM jsonb_object_keys(flusso_build('wide', '1'))) AS keys,
       flusso_build('wide', '1') -> 'c120' AS c120, flusso_build('wide', '1') -> 'id' AS id;

-- 20,000 fields, as wide as a definition of at most 1 MB gets: the pieces
-- are joined as a balanced tree, which neither the parser nor the executor
-- recurses through 400 levels deep for
SELECT flusso_create_index('widest', '{"version":1,"table":"kinds","primary_key":"id","fields":['
	|| string_agg(format('{"keyword":"f%s","column":"t","required":false}', i), ',')
	|| ']}')
FROM generate_series(1, 20000) i;
SELECT (SELECT count(*) FROM jsonb_object_keys(flusso_build('widest', '1'))) AS keys,
       flusso_build('widest', '1') -> 'f20000' AS f20000;
SELECT count(*) AS problems FROM flusso_check() WHERE index = 'widest';
SELECT flusso_drop_index('widest');

-- JSON has no NaN or infinity: they become null, in arrays too
CREATE TABLE specials (id int PRIMARY KEY, f4 real, f8 double precision, n numeric,
	d date, ts timestamp, tz timestamptz, fs float8[], ds date[]);
INSERT INTO specials VALUES
	(1, 'NaN', 'Infinity', 'NaN', 'infinity', '-infinity', 'infinity',
	 '{1.5,NaN,-Infinity}', '{2024-01-02,infinity}'),
	(2, '-Infinity', 'NaN', '-Infinity', '-infinity', 'infinity', '-infinity', NULL, NULL),
	(3, 1.5, 0.30000000000000004, 'Infinity', '2024-02-29', '2024-02-29 13:14:15',
	 '2024-02-29 13:14:15+02', '{}', '{}');
SELECT flusso_create_index('specials', $$
version: 1
table: specials
primary_key: id
fields:
  - { float: f4, required: false }
  - { double: f8, required: false }
  - { decimal: n, required: false }
  - { date: d, required: false }
  - { timestamp: ts, required: false }
  - { timestamp: tz, required: false }
  - { double: fs, required: false }
  - { date: ds, required: false }
  - { max: latest, table: specials, column: d, value_type: date, foreign_key: id }
  - { avg: mean, table: specials, column: f8, foreign_key: id }
$$);
SELECT id, flusso_build('specials', id::text) FROM specials ORDER BY id;
SELECT flusso_drop_index('specials');
DROP TABLE specials;

-- a table named by a reserved word, as the root, with quoted columns
SELECT flusso_create_index('refs', $$
version: 1
table: references
primary_key: id
fields:
  - integer: order
    required: true
  - text: desc
    required: true
$$);
SELECT flusso_build('refs', '00000000-0000-0000-0000-000000000002');

-- a default is cast to the column's type with its modifier: char(2)
UPDATE publishers SET country = NULL WHERE id = 1;
SELECT flusso_build('books', '1') -> 'publisher' AS publisher;

-- a char(n) key and a char(n) filter are cast to bpchar, not to character(1)
CREATE TABLE codes (code char(3) PRIMARY KEY, grade char(2) NOT NULL, label text NOT NULL);
INSERT INTO codes VALUES ('ABC', 'A1', 'first'), ('ABD', 'B2', 'second');
SELECT flusso_create_index('codes', '{"version": 1, "table": "codes",
  "filters": [{"column": "grade", "op": "in", "value": ["A1", "B2"]}],
  "fields": [{"keyword": "label", "required": true}]}');
SELECT flusso_build('codes', 'ABD');
SELECT flusso_build('codes', 'A');
SELECT flusso_drop_index('codes');
DROP TABLE codes;

-- errors
\set VERBOSITY terse
SELECT flusso_build('nope', '1');
SELECT flusso_build('books', 'x');
\set VERBOSITY default

DROP TABLE kinds;
DROP TABLE book_authors, reviews, loans, "references", books, authors, publishers;
-- quietly: which tables go (a seed may have a shadow) depends on timing
SET client_min_messages = warning;
DROP EXTENSION flusso CASCADE;
RESET client_min_messages;

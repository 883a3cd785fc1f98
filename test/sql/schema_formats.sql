--
-- schema_formats: the fixture schemas in YAML and in JSON, every field kind
-- of the format, YAML 1.2 scalars, and what changes the version.
--
CREATE EXTENSION flusso;
\getenv abs_srcdir PG_ABS_SRCDIR
\set fixtures :abs_srcdir '/fixtures/'

-- The library fixtures, each in YAML and in JSON (the JSON lists every
-- mapping's keys in reverse order): the same meaning, so the same version.
SELECT flusso_create_index('books', pg_read_file(:'fixtures' || 'books.schema.yml'));
SELECT flusso_create_index('books_json', pg_read_file(:'fixtures' || 'books.schema.json'));
SELECT flusso_create_index('authors', pg_read_file(:'fixtures' || 'authors.schema.yml'));
SELECT flusso_create_index('authors_json', pg_read_file(:'fixtures' || 'authors.schema.json'));
SELECT name, schema_name, table_name, length(version) AS version_length
FROM flusso_indexes ORDER BY name;
SELECT a.name, b.name, a.version = b.version AS same_version,
       a.definition = b.definition AS same_definition
FROM flusso_indexes a JOIN flusso_indexes b ON b.name = a.name || '_json'
ORDER BY a.name;

-- The canonical form spells out every default.
SELECT jsonb_pretty(definition) FROM flusso_indexes WHERE name = 'books';

-- Every type, join verb, aggregate, filter form, transform, soft_delete on a
-- field, a composite key and per-join schemas.
SELECT flusso_create_index('everything', pg_read_file(:'fixtures' || 'everything.schema.yml'));
SELECT jsonb_pretty(definition) FROM flusso_indexes WHERE name = 'everything';

-- YAML 1.2 core schema: only true/false are booleans, yes/on/no stay strings;
-- 0x and 0o integers; quoted numbers are strings; ~ is null.
SELECT flusso_create_index('yaml12', $$
version: 0x1
table: t
fields:
  - constant: a
    value: yes
  - constant: b
    value: on
  - constant: c
    value: 0o17
  - constant: d
    value: "42"
  - constant: e
    value: ~
  - constant: f
    value: 1.50
  - constant: g
    value: .5e1
$$);
SELECT jsonb_pretty(definition -> 'fields') FROM flusso_indexes WHERE name = 'yaml12';

-- YAML anchors and aliases are followed.
SELECT flusso_create_index('aliases', $$
version: 1
table: t
fields:
  - keyword: a
    required: &req true
  - keyword: b
    required: *req
    transforms: &tf [trim, lowercase]
  - keyword: c
    required: false
    transforms: *tf
$$);
SELECT jsonb_pretty(definition -> 'fields') FROM flusso_indexes WHERE name = 'aliases';

-- The version: formatting, key order, spelt-out defaults and the choice of
-- YAML or JSON leave it alone; anything that changes meaning changes it.
CREATE TEMP TABLE variants (n serial, label text, def text);
INSERT INTO variants (label, def) VALUES
  ('base', $$
version: 1
table: users
primary_key: id
fields:
  - keyword: email
    required: true
  - has_many: orders
    table: orders
    foreign_key: user_id
    primary_key: id
    fields: [ { double: total, required: true } ]
$$),
  ('reordered and reformatted', $$
fields:
  - { required: true, keyword: email }
  - primary_key: id
    fields:
      - required: true
        double: total
    foreign_key: user_id
    table: orders
    has_many: orders
primary_key: [id]
table: "  Users "
version: 1
$$),
  ('defaults spelt out', $$
version: 1
schema: public
table: users
primary_key: id
filters: []
fields:
  - keyword: email
    column: email
    required: true
    transforms: []
    options: {}
  - has_many: orders
    schema: public
    table: orders
    foreign_key: user_id
    primary_key: id
    filters: []
    order_by: []
    fields: [ { double: total, column: total, required: true } ]
$$),
  ('json', $${"version": 1, "table": "users", "primary_key": "id", "fields": [
    {"keyword": "email", "required": true},
    {"has_many": "orders", "table": "orders", "foreign_key": "user_id",
     "primary_key": "id", "fields": [{"double": "total", "required": true}]}]}$$),
  ('required changed', $$
version: 1
table: users
primary_key: id
fields:
  - keyword: email
    required: false
  - has_many: orders
    table: orders
    foreign_key: user_id
    primary_key: id
    fields: [ { double: total, required: true } ]
$$),
  ('order_by added', $$
version: 1
table: users
primary_key: id
fields:
  - keyword: email
    required: true
  - has_many: orders
    table: orders
    foreign_key: user_id
    primary_key: id
    order_by: [ { column: id } ]
    fields: [ { double: total, required: true } ]
$$),
  ('field renamed', $$
version: 1
table: users
primary_key: id
fields:
  - keyword: mail
    column: email
    required: true
  - has_many: orders
    table: orders
    foreign_key: user_id
    primary_key: id
    fields: [ { double: total, required: true } ]
$$);
SELECT flusso_create_index('v_' || n, def) FROM variants ORDER BY n;
SELECT v.label, i.version = (SELECT version FROM flusso_indexes WHERE name = 'v_1') AS same_as_base
FROM variants v JOIN flusso_indexes i ON i.name = 'v_' || v.n
ORDER BY v.n;

-- quietly: which tables go (a seed may have a shadow) depends on timing
SET client_min_messages = warning;
DROP EXTENSION flusso CASCADE;
RESET client_min_messages;

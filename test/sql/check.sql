--
-- check: flusso_check() against a deliberately mismatched database, each
-- diagnostic kind once, then fixed.
--
CREATE EXTENSION flusso;

CREATE SCHEMA chk;
CREATE TABLE chk.owners (id int PRIMARY KEY, email text NOT NULL UNIQUE);
ALTER TABLE chk.owners REPLICA IDENTITY USING INDEX owners_email_key;
CREATE TABLE chk.shops (
	id int PRIMARY KEY, name text, code text NOT NULL, opened date,
	region text, owner_id int REFERENCES chk.owners);
CREATE TABLE chk.items (id int PRIMARY KEY, shop_id int NOT NULL, sku text NOT NULL);
CREATE UNIQUE INDEX items_shop_key ON chk.items (shop_id, id);
CREATE TABLE chk.no_identity (shop_id int, label text);
CREATE TABLE chk.nokey (x int, label text);
ALTER TABLE chk.nokey REPLICA IDENTITY FULL;
CREATE VIEW chk.shop_view AS SELECT * FROM chk.shops;
CREATE PUBLICATION flusso
	FOR TABLE chk.shops WHERE (id > 0), chk.items (id, sku), chk.no_identity, chk.nokey
	WITH (publish = 'insert, update, delete');

SELECT flusso_create_index('mismatch', $$
version: 1
schema: chk
table: shops
primary_key: id
filters:
  - { column: opened, op: gt, value: "not a date" }
fields:
  - text: name
    required: true
  - integer: code
    required: true
  - date: openedd
    required: false
  - custom: region
    postgres: [varchar]
    opensearch: keyword
    required: false
  - has_many: items
    table: items
    foreign_key: shop_id
    primary_key: id
    fields: [ { keyword: sku, required: true } ]
  - has_many: orphans
    table: no_identity
    foreign_key: shop_id
    primary_key: label
    fields: []
  - belongs_to: owner
    column: owner_id
    table: owners
    primary_key: id
    fields: [ { keyword: email, required: true } ]
  - has_one: ghost
    table: ghosts
    foreign_key: shop_id
    primary_key: id
    fields: []
  - has_many: views
    table: shop_view
    foreign_key: id
    primary_key: id
    fields: []
  - count: elsewhere
    schema: nowhere
    table: t
    foreign_key: shop_id
  - ids: labels
    table: nokey
    foreign_key: x
    element_type: long
$$);
SELECT flusso_create_index('nopk', E'version: 1\nschema: chk\ntable: nokey\nfields: []');
SELECT flusso_create_index('badraw', $$
version: 1
schema: chk
table: items
primary_key: id
filters:
  - { raw: "id >>> 1" }
fields: []
$$);

-- The slot and worker rows come and go as the worker starts (002_environment
-- and 003_worker test them); leave them out here.
CREATE FUNCTION pg_temp.checked()
RETURNS TABLE (index text, path text, severity text, message text, hint text)
LANGUAGE sql AS $$
	SELECT index, path, severity, message, hint
	FROM flusso_check()
	WHERE path NOT IN ('slot', 'worker')
$$;
\x on
SELECT * FROM pg_temp.checked();
\x off

-- fixed one by one, the rows go away
ALTER PUBLICATION flusso SET (publish = 'insert, update, delete, truncate');
ALTER TABLE chk.shops ALTER COLUMN name SET NOT NULL;
SELECT flusso_create_index('mismatch', $$
version: 1
schema: chk
table: shops
primary_key: id
fields:
  - text: name
    required: true
  - has_many: items
    table: items
    foreign_key: shop_id
    primary_key: id
    fields: [ { keyword: sku, required: true } ]
$$, replace => true);
SELECT flusso_drop_index('nopk');
SELECT flusso_drop_index('badraw');

SELECT index, path, severity, message FROM pg_temp.checked();
ALTER PUBLICATION flusso DROP TABLE chk.shops, chk.items;
ALTER PUBLICATION flusso ADD TABLE chk.shops, chk.items;
ALTER TABLE chk.items REPLICA IDENTITY USING INDEX items_shop_key;
SELECT index, path, severity, message FROM pg_temp.checked();

-- what the worker refuses to build, check reports: a declared key that can
-- be null or is not unique cannot name documents, an owner must be able to
-- read every column, a raw filter must be one expression
SELECT flusso_create_index('nullkey', E'version: 1\nschema: chk\ntable: shops\nprimary_key: region\nfields: []');
SELECT flusso_create_index('dupkey', E'version: 1\nschema: chk\ntable: items\nprimary_key: sku\nfields: []');
SELECT flusso_create_index('uniquekey', E'version: 1\nschema: chk\ntable: items\nprimary_key: [sku, shop_id, id]\nfields: []');
CREATE ROLE regress_flusso_blind IN ROLE flusso_admin;
GRANT USAGE ON SCHEMA chk TO regress_flusso_blind;
GRANT SELECT (id) ON chk.shops TO regress_flusso_blind;
SET ROLE regress_flusso_blind;
SELECT flusso_create_index('blind', E'version: 1\nschema: chk\ntable: shops\nfields: [ { text: name, required: true } ]');
RESET ROLE;
-- a raw filter stored before create refused it (as 0.1.0 did)
INSERT INTO flusso.index (name, version, schema_name, table_name, definition, source, owner)
SELECT 'escaping', version, schema_name, table_name, definition,
	   replace(source, 'fields:', E'filters: [ { raw: "true) OR (true" } ]\nfields:'), owner
FROM flusso.index WHERE name = 'uniquekey';
SELECT index, path, severity, message FROM pg_temp.checked()
WHERE message NOT LIKE 'the replica identity%' ORDER BY index;
GRANT SELECT (name) ON chk.shops TO regress_flusso_blind;
SELECT flusso_drop_index('nullkey');
SELECT flusso_drop_index('dupkey');
-- quietly: whether the worker made its documents table depends on timing
SET client_min_messages = warning;
SELECT flusso_drop_index('escaping');
RESET client_min_messages;
SELECT index, path, severity, message FROM pg_temp.checked()
WHERE message NOT LIKE 'the replica identity%' ORDER BY index;
SELECT flusso_drop_index('uniquekey');
SELECT flusso_drop_index('blind');

-- a join reads its table by the foreign key once per document: without an
-- index leading with that column (btree or hash, valid, not partial) each
-- build scans the table, with the statement that adds one
CREATE TABLE chk.kids (id int PRIMARY KEY, shop_id int NOT NULL, rank int NOT NULL);
INSERT INTO chk.kids SELECT g, g % 3, g FROM generate_series(1, 30) g;
ANALYZE chk.kids;
SELECT flusso_create_index('lookups', $$
version: 1
schema: chk
table: shops
primary_key: id
fields:
  - has_many: kids
    table: kids
    foreign_key: shop_id
    primary_key: id
    fields: [ { integer: rank, required: true } ]
$$);
CREATE FUNCTION pg_temp.lookups()
RETURNS TABLE (path text, severity text, message text, hint text)
LANGUAGE sql AS $$
	SELECT path, severity, message, hint FROM flusso_check()
	WHERE index = 'lookups' AND message LIKE '%which no index leads with%'
$$;
\x on
SELECT * FROM pg_temp.lookups();
\x off
-- an index with the column second does not serve (and takes the name)
CREATE INDEX kids_shop_id_idx ON chk.kids (rank, shop_id);
SELECT hint FROM pg_temp.lookups();
-- nor does a partial index
CREATE INDEX kids_some_shops ON chk.kids (shop_id) WHERE rank > 10;
SELECT hint FROM pg_temp.lookups();
-- an index leading with it does, also of several columns, also hash
CREATE INDEX kids_shop_rank ON chk.kids (shop_id, rank);
SELECT count(*) FROM pg_temp.lookups();
DROP INDEX chk.kids_shop_rank;
CREATE INDEX kids_shop_hash ON chk.kids USING hash (shop_id);
SELECT count(*) FROM pg_temp.lookups();
-- resolving a change reads too: a junction by its right key, for a change
-- to the far side
CREATE TABLE chk.tags (id int PRIMARY KEY, label text NOT NULL);
CREATE TABLE chk.shop_tags (shop_id int, tag_id int, PRIMARY KEY (shop_id, tag_id));
SELECT flusso_create_index('lookups', $$
version: 1
schema: chk
table: shops
primary_key: id
fields:
  - many_to_many: tags
    table: tags
    primary_key: id
    through: { table: shop_tags, left_key: shop_id, right_key: tag_id }
    fields: [ { keyword: label, required: true } ]
$$, replace => true);
\x on
SELECT * FROM pg_temp.lookups();
\x off
-- quietly: whether the worker made its documents table depends on timing
SET client_min_messages = warning;
SELECT flusso_drop_index('lookups');
RESET client_min_messages;

DROP PUBLICATION flusso;
DROP SCHEMA chk CASCADE;
-- quietly: which tables go (a seed may have a shadow) depends on timing
SET client_min_messages = warning;
DROP EXTENSION flusso CASCADE;
RESET client_min_messages;
DROP ROLE regress_flusso_blind;

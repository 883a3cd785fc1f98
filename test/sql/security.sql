--
-- security: a flusso_admin member who owns a schema puts operators,
-- functions and types there that shadow pg_catalog's, puts the schema
-- first in search_path, and calls every SQL function.  Nothing of the
-- schema may run inside them: each trap records who sprang it.
--
CREATE EXTENSION flusso VERSION '0.1.0';
\getenv abs_srcdir PG_ABS_SRCDIR
\set fixtures :abs_srcdir '/fixtures/'
\i :fixtures/schema.sql
\i :fixtures/seed.sql
SELECT pg_read_file(:'fixtures' || 'books.schema.yml') AS books_definition \gset

CREATE ROLE regress_mallory LOGIN;
GRANT flusso_admin TO regress_mallory;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO regress_mallory;
CREATE SCHEMA mal AUTHORIZATION regress_mallory;

SET ROLE regress_mallory;
\i :fixtures/traps.sql

-- the traps work: a query of regress_mallory's own springs them
SET search_path = mal, pg_catalog;
SELECT 'a'::text = 'a' AS traps_work;
RESET search_path;
SELECT who, trap FROM mal.sprung ORDER BY trap;
DELETE FROM mal.sprung;

-- every SQL function, with the traps first in search_path: as released
-- (0.1.0, whose functions do not pin search_path themselves), the library
-- pins it wherever it runs as another role, so no trap runs as anyone but
-- regress_mallory
\i :abs_srcdir/sql/security_calls.psql
SELECT DISTINCT who FROM mal.sprung WHERE who <> current_user;
DELETE FROM mal.sprung;
SELECT public.flusso_drop_index('books');
RESET ROLE;
ALTER EXTENSION flusso UPDATE;
SET ROLE regress_mallory;

-- and updated, every function pins search_path: nothing of mal runs
\i :abs_srcdir/sql/security_calls.psql

-- nor in the functions 0.3.0 adds, an OpenSearch sink's code paths
-- included (no cluster answers; they run all the same)
RESET ROLE;
CREATE SERVER trapped FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url 'http://127.0.0.1:1', connect_timeout '1');
GRANT USAGE ON FOREIGN SERVER trapped TO regress_mallory;
SET ROLE regress_mallory;
CREATE USER MAPPING FOR CURRENT_USER SERVER trapped OPTIONS (user 'mallory', password 'x');
SET search_path = mal, pg_catalog;
SELECT public.flusso_set_sinks('books', ARRAY['table', 'trapped'], '{"replicas": 0}');
SELECT EXISTS (SELECT FROM public.flusso_check()) AS checked;
SELECT EXISTS (SELECT FROM public.flusso_provision()) AS provisioned;
SELECT EXISTS (SELECT FROM public.flusso_status()) AS status;
SELECT EXISTS (SELECT FROM public.flusso_rejected('books')) AS rejected;
SELECT public.flusso_retry_rejected('books') IS NOT NULL AS retried;
SELECT EXISTS (SELECT FROM public.flusso_verify('books')) IS NOT NULL AS verified;
SELECT public.flusso_adopt('books') IS NOT NULL AS adopted;
SELECT public.flusso_set_sinks('books', ARRAY['table']);
SELECT public.flusso_create_index('spare', '{"version": 1, "table": "loans", "fields": []}');
SELECT public.flusso_drop_index('spare', keep_opensearch => true);

-- nor in the functions 0.4.0 adds: a draft, and the preview and mapping of
-- a definition not created (a preview builds as its caller, under the
-- same pinned settings)
SELECT public.flusso_draft('public.books', 3) IS NOT NULL AS drafted;
SELECT public.flusso_preview(:'books_definition', '1') ->> 'title' AS previewed;
SELECT public.flusso_preview(public.flusso_draft('public.books', 3), '1') ->> 'title' AS previewed_draft;
SELECT public.flusso_mapping(:'books_definition') IS NOT NULL AS mapping;
RESET search_path;

SELECT who, trap FROM mal.sprung ORDER BY trap;

-- a raw filter is one SQL expression: it cannot escape its parentheses,
-- the key restriction, or its statement
\set VERBOSITY terse
SELECT public.flusso_create_index('inj', $$
version: 1
table: books
primary_key: id
filters: [ { raw: "true) OR (true" } ]
fields: []
$$);
SELECT public.flusso_create_index('inj', $$
version: 1
table: books
primary_key: id
fields:
  - has_many: reviews
    table: reviews
    foreign_key: book_id
    primary_key: id
    filters: [ { raw: "1=1); DROP TABLE loans; --" } ]
    fields: []
$$);
SELECT public.flusso_create_index('inj', $$
version: 1
table: books
primary_key: id
soft_delete: { column: withdrawn, when: [ { raw: "true; SELECT 1" } ] }
fields: []
$$);
SELECT public.flusso_create_index('inj', 'version: 1
table: books
primary_key: id
filters: [ { raw: "pages > 100 ORDER BY 1" } ]
fields: []');
SELECT public.flusso_create_index('inj', 'version: 1
table: books
primary_key: id
filters: [ { raw: "(SELECT true) AS x" } ]
fields: []');
\set VERBOSITY default
-- a trailing comment stays inside its parentheses
SELECT public.flusso_create_index('commented', 'version: 1
table: books
primary_key: id
filters: [ { raw: "pages > 200 -- long books only" } ]
fields: [ { text: title, required: true } ]');
SELECT public.flusso_build('commented', '1') AS short_book, public.flusso_build('commented', '2') AS long_book;
SELECT public.flusso_drop_index('commented');

-- and regress_mallory is what it was
RESET ROLE;
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_mallory';

SET client_min_messages = warning;
SELECT flusso_drop_index('books');
DROP USER MAPPING FOR regress_mallory SERVER trapped;
DROP SERVER trapped;
DROP SCHEMA mal CASCADE;
DROP TABLE book_authors, reviews, loans, "references", books, authors, publishers;
DROP EXTENSION flusso CASCADE;
DROP OWNED BY regress_mallory;
DROP ROLE regress_mallory;
RESET client_min_messages;

--
-- security: a flusso_admin member who owns a schema puts operators,
-- functions and types there that shadow pg_catalog's, puts the schema
-- first in search_path, and calls every SQL function.  Nothing of the
-- schema may run inside them: each trap records who sprang it.
--
CREATE EXTENSION flusso VERSION '0.1.0';
\getenv abs_srcdir PG_ABS_SRCDIR
\set fixtures :abs_srcdir '/test/fixtures/'
\i :fixtures/schema.sql
\i :fixtures/seed.sql
SELECT pg_read_file(:'fixtures' || 'books.schema.yml') AS books_definition \gset

CREATE ROLE regress_mallory LOGIN;
GRANT flusso_admin TO regress_mallory;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO regress_mallory;
CREATE SCHEMA mal AUTHORIZATION regress_mallory;

SET ROLE regress_mallory;
CREATE TABLE mal.sprung (who name, trap text);
GRANT INSERT ON mal.sprung TO PUBLIC;
GRANT USAGE ON SCHEMA mal TO PUBLIC;
-- a trap: note who ran it, and if that is a superuser, make regress_mallory one
CREATE FUNCTION mal.spring(trap text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO mal.sprung VALUES (current_user, trap);
	IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
		EXECUTE 'ALTER ROLE regress_mallory SUPERUSER';
	END IF;
	RETURN true;
END
$$;

-- operators that shadow pg_catalog's, and behave like them
CREATE FUNCTION mal.text_eq(text, text) RETURNS boolean LANGUAGE sql
	AS $$ SELECT mal.spring('text = text') AND $1 OPERATOR(pg_catalog.=) $2 $$;
CREATE OPERATOR mal.= (LEFTARG = text, RIGHTARG = text, FUNCTION = mal.text_eq);
CREATE FUNCTION mal.name_eq(name, text) RETURNS boolean LANGUAGE sql
	AS $$ SELECT mal.spring('name = text') AND $1 OPERATOR(pg_catalog.=) $2 $$;
CREATE OPERATOR mal.= (LEFTARG = name, RIGHTARG = text, FUNCTION = mal.name_eq);
CREATE FUNCTION mal.oid_eq(oid, oid) RETURNS boolean LANGUAGE sql
	AS $$ SELECT mal.spring('oid = oid') AND $1 OPERATOR(pg_catalog.=) $2 $$;
CREATE OPERATOR mal.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = mal.oid_eq);
CREATE FUNCTION mal.int8_eq(bigint, bigint) RETURNS boolean LANGUAGE sql
	AS $$ SELECT mal.spring('bigint = bigint') AND $1 OPERATOR(pg_catalog.=) $2 $$;
CREATE OPERATOR mal.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = mal.int8_eq);
CREATE FUNCTION mal.text_cat(text, text) RETURNS text LANGUAGE sql
	AS $$ SELECT CASE WHEN mal.spring('text || text') THEN $1 OPERATOR(pg_catalog.||) $2 END $$;
CREATE OPERATOR mal.|| (LEFTARG = text, RIGHTARG = text, FUNCTION = mal.text_cat);

-- functions that shadow pg_catalog's
CREATE FUNCTION mal.lower(text) RETURNS text LANGUAGE sql
	AS $$ SELECT CASE WHEN mal.spring('lower()') THEN pg_catalog.lower($1) END $$;
CREATE FUNCTION mal.btrim(text) RETURNS text LANGUAGE sql
	AS $$ SELECT CASE WHEN mal.spring('btrim()') THEN pg_catalog.btrim($1) END $$;
CREATE FUNCTION mal.now() RETURNS timestamptz LANGUAGE sql
	AS $$ SELECT CASE WHEN mal.spring('now()') THEN pg_catalog.now() END $$;
CREATE FUNCTION mal.count_step(bigint) RETURNS bigint LANGUAGE sql
	AS $$ SELECT CASE WHEN mal.spring('count(*)') THEN $1 + 1 END $$;
CREATE AGGREGATE mal.count(*) (SFUNC = mal.count_step, STYPE = bigint, INITCOND = '0');

-- types, and so casts, that shadow pg_catalog's
CREATE DOMAIN mal.text AS pg_catalog.text CHECK (mal.spring('cast to text'));
CREATE DOMAIN mal.jsonb AS pg_catalog.jsonb CHECK (mal.spring('cast to jsonb'));
CREATE DOMAIN mal.regrole AS pg_catalog.regrole CHECK (mal.spring('cast to regrole'));
CREATE DOMAIN mal.int8 AS pg_catalog.int8 CHECK (mal.spring('cast to int8'));

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
DROP SCHEMA mal CASCADE;
DROP TABLE book_authors, reviews, loans, "references", books, authors, publishers;
DROP EXTENSION flusso CASCADE;
DROP OWNED BY regress_mallory;
DROP ROLE regress_mallory;
RESET client_min_messages;

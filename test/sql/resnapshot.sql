--
-- resnapshot: flusso_resnapshot() with a predicate over the root table or
-- a list of document ids, checked as the index's owner when asked for: a
-- predicate that is not one expression, does not apply to the root table
-- or reads what the owner may not is refused, and nothing is recorded.
--
CREATE EXTENSION flusso;
CREATE TABLE people (id int PRIMARY KEY, country text NOT NULL, hidden boolean NOT NULL DEFAULT false);
CREATE TABLE pairs (a int, b text, note text, PRIMARY KEY (a, b));
CREATE TABLE secrets (id int PRIMARY KEY);
CREATE FUNCTION public.is_dutch(c text) RETURNS boolean LANGUAGE sql AS $$ SELECT c = 'NL' $$;
CREATE ROLE regress_rs_alice IN ROLE flusso_admin;
CREATE ROLE regress_rs_bob IN ROLE flusso_admin;
CREATE ROLE regress_rs_plain;
GRANT SELECT ON people, pairs TO regress_rs_alice;
SET ROLE regress_rs_alice;
SELECT flusso_create_index('people', E'version: 1\ntable: people\nfields:\n  - keyword: country\n    required: true');
SELECT flusso_create_index('pairs', E'version: 1\ntable: pairs\nfields:\n  - text: note\n    required: false');
RESET ROLE;

-- not one SQL expression
SELECT flusso_resnapshot('people', predicate => 'true) OR (true');
SELECT flusso_resnapshot('people', predicate => 'id = 1; DROP TABLE people');
-- not an expression the root table gives a boolean for
SELECT flusso_resnapshot('people', predicate => 'nosuch = 1');
SELECT flusso_resnapshot('people', predicate => 'id + 1');
-- read as the owner, under search_path pg_catalog, pg_temp
SELECT flusso_resnapshot('people', predicate => 'is_dutch(country)');
SELECT flusso_resnapshot('people', predicate => 'id IN (SELECT id FROM public.secrets)');
-- a predicate or ids, not both; ids that are the index's
SELECT flusso_resnapshot('people', predicate => 'true', ids => '{1}');
SELECT flusso_resnapshot('people', ids => '{}');
SELECT flusso_resnapshot('people', ids => '{1,NULL}');
SELECT flusso_resnapshot('pairs', ids => '{1:a,2}');
SELECT flusso_resnapshot('nosuch', predicate => 'true');
SELECT count(*) AS nothing_recorded FROM flusso.signal;

-- who may ask: the owner, not another admin nor a plain role
SET ROLE regress_rs_bob;
SELECT flusso_resnapshot('people', predicate => 'true');
RESET ROLE;
SET ROLE regress_rs_plain;
SELECT flusso_resnapshot('people', predicate => 'true');
RESET ROLE;
SET ROLE regress_rs_alice;
BEGIN;
SELECT flusso_resnapshot('people', predicate => 'public.is_dutch(country) AND NOT hidden') IS NOT NULL AS asked;
SELECT flusso_resnapshot('pairs', ids => ARRAY['1:a', '2:b\:c']) IS NOT NULL AS asked;
-- a trailing comment cannot swallow the parenthesis that closes it
SELECT flusso_resnapshot('people', predicate => 'id = 1 --') IS NOT NULL AS asked;
SELECT flusso_resnapshot('people') IS NOT NULL AS asked;
RESET ROLE;
SELECT kind, index_name, detail FROM flusso.signal ORDER BY kind, detail;
ROLLBACK;

-- a definition that only gains fields is taken in place: no seed, and
-- every document rebuilt where it is served; any other change seeds again
RESET ROLE;
BEGIN;
UPDATE flusso.index SET needs_seed = false; -- as the seeded index would be
SET ROLE regress_rs_alice;
SELECT flusso_create_index('people', E'version: 1\ntable: people\nfields:\n  - keyword: country\n    required: true\n  - boolean: hidden\n    required: true', true);
RESET ROLE;
SELECT name, needs_seed FROM flusso.index WHERE name = 'people';
SELECT kind, index_name, detail FROM flusso.signal;
ROLLBACK;
BEGIN;
UPDATE flusso.index SET needs_seed = false; -- as the seeded index would be
SET ROLE regress_rs_alice;
-- removed
SELECT flusso_create_index('people', E'version: 1\ntable: people\nfields: []', true);
RESET ROLE;
SELECT name, needs_seed FROM flusso.index WHERE name = 'people';
SELECT count(*) AS requests FROM flusso.signal;
ROLLBACK;
BEGIN;
UPDATE flusso.index SET needs_seed = false; -- as the seeded index would be
SET ROLE regress_rs_alice;
-- retyped
SELECT flusso_create_index('people', E'version: 1\ntable: people\nfields:\n  - text: country\n    required: true', true);
RESET ROLE;
SELECT name, needs_seed FROM flusso.index WHERE name = 'people';
ROLLBACK;
BEGIN;
UPDATE flusso.index SET needs_seed = false; -- as the seeded index would be
SET ROLE regress_rs_alice;
-- a field added beside a new root filter
SELECT flusso_create_index('people', E'version: 1\ntable: people\nfilters:\n  - { column: hidden, op: eq, value: false }\nfields:\n  - keyword: country\n    required: true\n  - boolean: hidden\n    required: true', true);
RESET ROLE;
SELECT name, needs_seed FROM flusso.index WHERE name = 'people';
ROLLBACK;

SET ROLE regress_rs_alice;
SELECT flusso_drop_index('people'), flusso_drop_index('pairs');
RESET ROLE;
DROP TABLE people, pairs, secrets;
DROP FUNCTION public.is_dutch(text);
DROP EXTENSION flusso;
DROP ROLE regress_rs_alice, regress_rs_bob, regress_rs_plain;

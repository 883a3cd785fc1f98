--
-- catalog: the objects CREATE EXTENSION makes, creating, replacing and
-- dropping indexes, and who may do it.
--
CREATE EXTENSION flusso;

SELECT nspname FROM pg_namespace WHERE nspname LIKE 'flusso%' ORDER BY 1;
SELECT rolname, rolcanlogin FROM pg_roles WHERE rolname = 'flusso_admin';
SELECT unnest(extconfig)::regclass AS dumped_tables FROM pg_extension WHERE extname = 'flusso';
\d flusso.signal
\d flusso_indexes
SELECT p.oid::regprocedure AS function, p.provolatile, p.prosecdef
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'flusso'
ORDER BY p.oid::regprocedure::text;

-- create, replace, drop
SELECT flusso_create_index('users', $$
version: 1
table: users
primary_key: id
fields:
  - keyword: email
    required: true
$$);
SELECT name, schema_name, table_name, definition -> 'fields' -> 0 ->> 'field' AS first_field
FROM flusso_indexes;
CREATE TEMP TABLE first AS SELECT version, created_at FROM flusso_indexes WHERE name = 'users';

-- the embedded sink: a table per index, owned by the index's owner
CREATE FUNCTION pg_temp.sink_tables()
RETURNS TABLE (sink regclass, owner name, admin_reads boolean)
LANGUAGE sql AS $$
	SELECT c.oid::regclass,
	       CASE WHEN pg_get_userbyid(c.relowner) = session_user THEN '(the superuser)'
	            ELSE pg_get_userbyid(c.relowner) END,
	       has_table_privilege('flusso_admin', c.oid, 'SELECT')
	FROM pg_class c
	WHERE c.relnamespace = 'flusso_docs'::regnamespace AND c.relkind = 'r'
	ORDER BY c.oid::regclass::text
$$;
SELECT * FROM pg_temp.sink_tables();
\d flusso_docs.users

SELECT flusso_create_index('users', $${"version": 1, "table": "users", "fields": []}$$);
SELECT flusso_create_index('users', $$
version: 1
schema: app
table: users
primary_key: id
fields:
  - keyword: email
    required: false
$$, replace => true);
SELECT i.schema_name, i.version <> f.version AS new_version,
       i.created_at = f.created_at AS same_created_at,
       x.updated_at >= x.created_at AS updated
FROM flusso_indexes i, first f, flusso.index x WHERE i.name = 'users' AND x.name = i.name;

-- a failed replace leaves the old definition
SELECT flusso_create_index('users', 'version: 1', replace => true);
SELECT schema_name, definition -> 'fields' -> 0 ->> 'required' AS required FROM flusso_indexes;

SELECT flusso_drop_index('users');
SELECT count(*) FROM flusso_indexes;
SELECT * FROM pg_temp.sink_tables();
SELECT flusso_drop_index('users');
SELECT flusso_resnapshot('users');
SELECT flusso_create_index('a name', 'version: 1');

-- roles: plain users are refused, flusso_admin members manage their own
CREATE ROLE regress_flusso_plain;
CREATE ROLE regress_flusso_alice IN ROLE flusso_admin;
CREATE ROLE regress_flusso_bob IN ROLE flusso_admin;

SET ROLE regress_flusso_plain;
SELECT flusso_create_index('t', E'version: 1\ntable: t\nfields: []');
SELECT flusso_resnapshot('t');
SELECT * FROM flusso_indexes;
SELECT * FROM flusso.index;
INSERT INTO flusso.index (name, version, schema_name, table_name, definition, source, owner)
VALUES ('forged', 'x', 'public', 't', '{}', '', 'regress_flusso_plain');
RESET ROLE;

SET ROLE regress_flusso_alice;
SELECT flusso_create_index('alices', E'version: 1\ntable: t\nfields: []');
SELECT name, table_name FROM flusso_indexes;
SELECT flusso_mapping('alices') -> 'mappings';
RESET ROLE;
SELECT name, owner FROM flusso.index;
SELECT * FROM pg_temp.sink_tables();

SET ROLE regress_flusso_bob;
SELECT flusso_create_index('alices', E'version: 1\ntable: u\nfields: []', true);
SELECT flusso_drop_index('alices');
SELECT flusso_resnapshot('alices');
RESET ROLE;

-- a function granted to a non-member by mistake still refuses
GRANT EXECUTE ON FUNCTION flusso_create_index(text, text, boolean) TO regress_flusso_plain;
SET ROLE regress_flusso_plain;
SELECT flusso_create_index('t', E'version: 1\ntable: t\nfields: []');
RESET ROLE;

-- documents hold what an index reads with its owner's rights: another
-- member reads them only once the owner grants SELECT
CREATE TABLE t (id int PRIMARY KEY, secret text);
INSERT INTO t VALUES (1, 'only alice may read this');
GRANT SELECT ON t TO regress_flusso_alice;
SET ROLE regress_flusso_alice;
SELECT flusso_create_index('alices', E'version: 1\ntable: t\nfields: [ { text: secret, required: false } ]', true);
RESET ROLE;
SET ROLE regress_flusso_bob;
SELECT flusso_build('alices', '1');
SELECT count(*) FROM flusso_verify('alices');
SELECT count(*) FROM flusso_search('alices', 'alice');
SELECT flusso_wait('alices', '0s');
SELECT count(*) FROM flusso_docs.alices;
RESET ROLE;
SET ROLE regress_flusso_plain;
SELECT flusso_wait('alices', '0s');
RESET ROLE;
-- flusso_wait() refuses what it cannot answer truly
SELECT flusso_wait('nothing');
SELECT flusso_wait('alices', '-1 second');
-- a publisher's position needs a subscription that fills flusso's tables
SELECT flusso_wait('alices', '0s', upstream_lsn => '0/1');
SELECT flusso_wait('alices', '0s', upstream_lsn => '0/1', subscription => 'nope');
SELECT flusso_wait('alices', '0s', subscription => 'nope');
SELECT flusso_wait(NULL) IS NULL AS null_name;
SELECT count(*) FROM flusso_upstream();
BEGIN;
INSERT INTO t VALUES (2, 'not committed yet');
SELECT flusso_wait('alices');
ROLLBACK;
SET ROLE regress_flusso_alice;
GRANT SELECT ON flusso_docs.alices TO regress_flusso_bob;
RESET ROLE;
SET ROLE regress_flusso_bob;
SELECT flusso_build('alices', '1') ->> 'secret' AS granted;
RESET ROLE;

-- metrics: flusso_stat, a row per index and sink, is for flusso_admin and
-- pg_monitor members (these read no error texts, nor definitions)
\d flusso_stat
CREATE ROLE regress_flusso_monitor IN ROLE pg_monitor;
SET ROLE regress_flusso_plain;
SELECT * FROM flusso_stat;
SELECT * FROM flusso_status();
RESET ROLE;
SET ROLE regress_flusso_monitor;
SELECT datname = current_database() AS here, index, sink, server_name, pending, shipped,
       rejected, last_error
FROM flusso_stat;
SELECT index, last_error, ship_error FROM flusso_status();
SELECT name FROM flusso_indexes;
RESET ROLE;

-- the index follows its documents table: a new owner (REASSIGN OWNED)
-- builds it from then on, and a role that owns an index cannot be dropped
DROP ROLE regress_flusso_alice;
GRANT SELECT ON t TO regress_flusso_bob;
REASSIGN OWNED BY regress_flusso_alice TO regress_flusso_bob;
SELECT name, owner FROM flusso.index;
SELECT * FROM pg_temp.sink_tables();
SET ROLE regress_flusso_alice;
SELECT flusso_drop_index('alices');
RESET ROLE;
-- and dropping the documents table (DROP OWNED) drops the index
DROP OWNED BY regress_flusso_bob;
SELECT count(*) FROM flusso.index;
DROP TABLE t;

-- quietly: which tables go (a seed may have a shadow) depends on timing
SET client_min_messages = warning;
DROP EXTENSION flusso CASCADE;
RESET client_min_messages;
DROP ROLE regress_flusso_plain, regress_flusso_alice, regress_flusso_bob, regress_flusso_monitor;

/* flusso--0.1.0.sql: the first version of flusso's SQL objects */

\echo Use "CREATE EXTENSION flusso" to load this file. \quit

-- Members of flusso_admin manage indexes without being superusers.  Roles are
-- cluster-wide, so the role may already exist (another database has flusso).
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'flusso_admin') THEN
		CREATE ROLE flusso_admin NOLOGIN;
	END IF;
END
$$;

-- flusso's own state; users read it through the functions and views below.
CREATE SCHEMA flusso;
REVOKE ALL ON SCHEMA flusso FROM PUBLIC;

-- Documents of the embedded sink, one table per index.
CREATE SCHEMA flusso_docs;
REVOKE ALL ON SCHEMA flusso_docs FROM PUBLIC;
GRANT USAGE ON SCHEMA flusso_docs TO flusso_admin;

-- One row per index: the definition as given, its canonical form and the
-- version (a hash of the canonical form).  Written only by the functions.
CREATE TABLE flusso.index (
	name		text PRIMARY KEY
				CHECK (name ~ '^[a-z_][a-z0-9_]*$' AND length(name) <= 63),
	version		text NOT NULL,
	schema_name	text NOT NULL,
	table_name	text NOT NULL,
	definition	jsonb NOT NULL,
	source		text NOT NULL,
	owner		regrole NOT NULL,
	needs_seed	boolean NOT NULL DEFAULT true,
	created_at	timestamptz NOT NULL DEFAULT pg_catalog.now(),
	updated_at	timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE flusso.index IS 'flusso index definitions';
SELECT pg_catalog.pg_extension_config_dump('flusso.index', '');

-- Watermarks of snapshots and ad-hoc signals, read back from the change
-- stream in commit order.  Rows are transient, so they are not dumped.
CREATE TABLE flusso.signal (
	id			uuid PRIMARY KEY DEFAULT pg_catalog.gen_random_uuid(),
	kind		text NOT NULL CHECK (kind IN ('low', 'high', 'resnapshot')),
	index_name	text NOT NULL,
	created_at	timestamptz NOT NULL DEFAULT pg_catalog.now()
);
COMMENT ON TABLE flusso.signal IS 'flusso snapshot watermarks and re-snapshot requests, read in stream order';

CREATE SCHEMA flusso_seed;
REVOKE ALL ON SCHEMA flusso_seed FROM PUBLIC;
GRANT USAGE ON SCHEMA flusso_seed TO flusso_admin;
COMMENT ON SCHEMA flusso_seed IS 'flusso shadow tables: documents being seeded, swapped into flusso_docs when done';

CREATE TABLE flusso.seed (
	index_name	text PRIMARY KEY,
	version		text NOT NULL,
	last_key	text[],
	max_key		text[],
	done		bigint NOT NULL DEFAULT 0,
	total		bigint NOT NULL DEFAULT 0,
	started_at	timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
	updated_at	timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp()
);
COMMENT ON TABLE flusso.seed IS 'flusso seeds in progress: the chunk cursor, written with each chunk''s documents';

CREATE TABLE flusso.stream (
	slot_name	text PRIMARY KEY,
	created_at	timestamptz NOT NULL DEFAULT pg_catalog.now()
);

-- Every change the worker applied, when flusso.capture_log is on
-- (diagnostics and tests of the capture path).
CREATE TABLE flusso.capture_log (
	id			bigserial PRIMARY KEY,
	relid		oid NOT NULL,
	op			"char" NOT NULL,
	old_key		jsonb,
	new_key		jsonb,
	xid			xid NOT NULL,
	commit_lsn	pg_lsn NOT NULL,
	captured_at	timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp()
);

CREATE FUNCTION flusso_create_index(name text, definition text,
									replace boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'flusso_create_index'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION flusso_create_index(text, text, boolean)
	IS 'define (or with replace, redefine) a flusso index from a YAML or JSON schema';

CREATE FUNCTION flusso_drop_index(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'flusso_drop_index'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION flusso_drop_index(text) IS 'drop a flusso index';

CREATE FUNCTION flusso_mapping(name text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'flusso_mapping'
LANGUAGE C STRICT STABLE;
COMMENT ON FUNCTION flusso_mapping(text)
	IS 'the OpenSearch index body (settings and mappings) derived from an index schema';

CREATE FUNCTION flusso_check()
RETURNS TABLE (index text, path text, severity text, message text, hint text)
AS 'MODULE_PATHNAME', 'flusso_check'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION flusso_check()
	IS 'every index against the live catalog, and the environment flusso runs in';

CREATE FUNCTION flusso_provision()
RETURNS TABLE (action text, sql text, applied boolean, blocker text)
AS 'MODULE_PATHNAME', 'flusso_provision'
LANGUAGE C STRICT VOLATILE SECURITY INVOKER;
COMMENT ON FUNCTION flusso_provision()
	IS 'create the publication and replica identities the indexes need, where the caller may';

-- What flusso's output plugin emitted, for rows of
-- pg_logical_slot_peek_binary_changes(slot, NULL, NULL, 'publication', 'flusso').
CREATE FUNCTION flusso_change_text(change bytea)
RETURNS text
AS 'MODULE_PATHNAME', 'flusso_change_text'
LANGUAGE C STRICT IMMUTABLE;
COMMENT ON FUNCTION flusso_change_text(bytea)
	IS 'a flusso change record as text: operation, relation, old and new key values';

CREATE FUNCTION flusso_change(change bytea, OUT op text, OUT relid oid,
							  OUT schema_name text, OUT table_name text, OUT xid xid,
							  OUT commit_lsn pg_lsn, OUT commit_time timestamptz)
AS 'MODULE_PATHNAME', 'flusso_change'
LANGUAGE C STRICT IMMUTABLE;
COMMENT ON FUNCTION flusso_change(bytea)
	IS 'the header of a flusso change record: operation, relation, transaction and commit';

CREATE FUNCTION flusso_build(name text, id text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'flusso_build'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION flusso_build(text, text)
	IS 'the document an index builds for a root key now, or NULL when it builds none';

CREATE FUNCTION flusso_verify(name text)
RETURNS TABLE (id text, problem text)
AS 'MODULE_PATHNAME', 'flusso_verify'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION flusso_verify(text)
	IS 'stored documents against a fresh build: missing, extra or different; nothing when all agree';

CREATE FUNCTION flusso_search(name text, query text)
RETURNS TABLE (id text, doc jsonb, rank real)
AS 'MODULE_PATHNAME', 'flusso_search'
LANGUAGE C STRICT STABLE;
COMMENT ON FUNCTION flusso_search(text, text)
	IS 'documents matching a web-search query over the text and identifier fields, best first';

CREATE FUNCTION flusso_status()
RETURNS TABLE (index text, phase text, snapshot_done bigint, snapshot_total bigint,
			   worker_pid integer, slot text, confirmed_lsn pg_lsn, lag_bytes bigint,
			   lag_seconds double precision, changes_captured bigint,
			   documents_written bigint, batches bigint, last_error text,
			   last_error_at timestamptz)
AS 'MODULE_PATHNAME', 'flusso_status'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION flusso_status()
	IS 'per index: phase and progress; per database: worker, slot, lag, counters, last error';

CREATE FUNCTION flusso_resnapshot(name text)
RETURNS uuid
AS 'MODULE_PATHNAME', 'flusso_resnapshot'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION flusso_resnapshot(text)
	IS 'seed an index again from its tables, once this request arrives in stream order';

CREATE VIEW flusso_indexes AS
	SELECT name, version, schema_name, table_name, definition, created_at
	FROM flusso.index;
COMMENT ON VIEW flusso_indexes IS 'flusso indexes and their canonical definitions';

REVOKE ALL ON FUNCTION flusso_create_index(text, text, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_drop_index(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_mapping(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_check() FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_provision() FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_change_text(bytea) FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_change(bytea) FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_status() FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_build(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_verify(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_search(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_resnapshot(text) FROM PUBLIC;
REVOKE ALL ON flusso_indexes FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flusso_create_index(text, text, boolean) TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_drop_index(text) TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_mapping(text) TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_check() TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_provision() TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_change_text(bytea) TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_change(bytea) TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_status() TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_build(text, text) TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_verify(text) TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_search(text, text) TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_resnapshot(text) TO flusso_admin;
GRANT SELECT ON flusso_indexes TO flusso_admin;

-- Tell the launcher about this database when CREATE EXTENSION commits: a
-- restore brings index definitions without calling flusso_create_index.
CREATE FUNCTION flusso_register_database()
RETURNS void
AS 'MODULE_PATHNAME', 'flusso_register_database'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION flusso_register_database()
	IS 'internal: have the flusso launcher look at this database at commit';
REVOKE ALL ON FUNCTION flusso_register_database() FROM PUBLIC;
SELECT flusso_register_database();

/* flusso--0.2.0--0.3.0.sql: the OpenSearch sink */

\echo Use "ALTER EXTENSION flusso UPDATE TO '0.3.0'" to load this file. \quit

-- An OpenSearch cluster is a foreign server of this wrapper, as dblink and
-- postgres_fdw keep theirs: the server holds the URL and cluster-wide
-- options, the user mapping of an index's owner its credentials, which
-- PostgreSQL shows to no other role and pg_dump keeps as any user mapping.
CREATE FUNCTION flusso_opensearch_validator(text[], oid)
RETURNS void
AS 'MODULE_PATHNAME', 'flusso_opensearch_validator'
LANGUAGE C STRICT
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_opensearch_validator(text[], oid)
	IS 'rejects unknown or malformed options of flusso_opensearch servers and user mappings';

CREATE FOREIGN DATA WRAPPER flusso_opensearch VALIDATOR flusso_opensearch_validator;
COMMENT ON FOREIGN DATA WRAPPER flusso_opensearch
	IS 'OpenSearch clusters flusso ships documents to';
-- Only superusers create servers (an URL is the infrastructure's to choose)
-- and grant USAGE on them to the roles whose indexes may ship there.

-- Where the documents of each index go.  An index with no row here has the
-- table sink only, as every index of 0.2.0.  (No foreign key to
-- flusso.index: pg_dump restores the data of configuration tables in no
-- particular order; flusso_drop_index deletes an index's rows.)
CREATE TABLE flusso.sink (
	index_name	text NOT NULL,
	sink		text NOT NULL CHECK (sink IN ('table', 'opensearch')),
	server_name	text CHECK ((sink = 'opensearch') = (server_name IS NOT NULL)),
	options		jsonb NOT NULL DEFAULT '{}',
	stopped		text,			-- on_error 'stop': why shipping stopped
	PRIMARY KEY (index_name, sink)
);
COMMENT ON TABLE flusso.sink IS 'flusso sinks of each index; none: the table sink';
SELECT pg_catalog.pg_extension_config_dump('flusso.sink', '');

-- The OpenSearch indexes flusso created or will create: one per index
-- version and generation, the served one behind the index's alias.  The
-- shipper moves them from seeding to seeded (the seed is complete in
-- PostgreSQL) to served (its documents drained, the alias swapped) to
-- retired (to be deleted).
CREATE SEQUENCE flusso.generation_seq;
CREATE TABLE flusso.opensearch_generation (
	generation	bigint PRIMARY KEY DEFAULT pg_catalog.nextval('flusso.generation_seq'),
	index_name	text NOT NULL,
	server_name	text NOT NULL,
	owner		regrole NOT NULL,
	alias		text NOT NULL,
	concrete	text NOT NULL UNIQUE,
	settings	jsonb NOT NULL,
	state		text NOT NULL CHECK (state IN ('seeding', 'seeded', 'served', 'retired')),
	created		boolean NOT NULL DEFAULT false,
	keep		boolean NOT NULL DEFAULT false,
	seeded_version bigint,
	truncate_version bigint,
	created_at	timestamptz NOT NULL DEFAULT pg_catalog.now(),
	updated_at	timestamptz NOT NULL DEFAULT pg_catalog.now()
);
CREATE INDEX ON flusso.opensearch_generation (index_name);
COMMENT ON TABLE flusso.opensearch_generation
	IS 'flusso OpenSearch indexes per generation, and where each stands';

-- Documents to ship: one row per index and document id, written in the
-- transaction of the batch that changed it, with the version it ships
-- with (the commit LSN the document was built after).  The shipper builds
-- the document when it ships it and deletes the row once OpenSearch took
-- it, so an outage grows this table, never pg_wal.
CREATE SEQUENCE flusso.outbox_seq;
CREATE TABLE flusso.outbox (
	index_name	text NOT NULL,
	id			text NOT NULL,
	version		bigint NOT NULL,
	seed_only	boolean NOT NULL,
	seq			bigint NOT NULL DEFAULT pg_catalog.nextval('flusso.outbox_seq'),
	queued_at	timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
	PRIMARY KEY (index_name, id)
);
CREATE INDEX ON flusso.outbox (index_name, version, seq);
COMMENT ON TABLE flusso.outbox IS 'flusso documents waiting to be shipped to OpenSearch';

-- Documents OpenSearch refused for a reason retrying cannot fix.
CREATE TABLE flusso.rejected (
	index_name	text NOT NULL,
	id			text NOT NULL,
	version		bigint NOT NULL,
	status		integer NOT NULL,
	error_type	text NOT NULL,
	reason		text NOT NULL,
	rejected_at	timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
	PRIMARY KEY (index_name, id)
);
COMMENT ON TABLE flusso.rejected IS 'flusso documents OpenSearch rejected, until retried';

-- flusso_retry_rejected() asks for its documents in stream order.
ALTER TABLE flusso.signal DROP CONSTRAINT signal_kind_check;
ALTER TABLE flusso.signal ADD CONSTRAINT signal_kind_check
	CHECK (kind IN ('low', 'high', 'resnapshot', 'retry'));

CREATE FUNCTION flusso_set_sinks(name text, sinks text[],
								 opensearch_options jsonb DEFAULT '{}')
RETURNS void
AS 'MODULE_PATHNAME', 'flusso_set_sinks'
LANGUAGE C STRICT VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_set_sinks(text, text[], jsonb)
	IS 'where an index''s documents go: ''table'' and/or a flusso_opensearch server';

CREATE FUNCTION flusso_rejected(name text)
RETURNS TABLE (id text, version bigint, status integer, error_type text, reason text,
			   rejected_at timestamptz)
AS 'MODULE_PATHNAME', 'flusso_rejected'
LANGUAGE C STRICT STABLE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_rejected(text)
	IS 'documents of an index OpenSearch rejected, and why';

CREATE FUNCTION flusso_retry_rejected(name text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'flusso_retry_rejected'
LANGUAGE C STRICT VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_retry_rejected(text)
	IS 'ship the rejected documents of an index again, built from the current rows';

-- flusso_drop_index can keep the index's OpenSearch indexes.
DROP FUNCTION flusso_drop_index(text);
CREATE FUNCTION flusso_drop_index(name text, keep_opensearch boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'flusso_drop_index'
LANGUAGE C STRICT VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_drop_index(text, boolean)
	IS 'drop a flusso index, its documents and (unless kept) its OpenSearch indexes';

-- flusso_verify covers every sink, and says which.
DROP FUNCTION flusso_verify(text);
CREATE FUNCTION flusso_verify(name text)
RETURNS TABLE (id text, problem text, sink text)
AS 'MODULE_PATHNAME', 'flusso_verify'
LANGUAGE C STRICT VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_verify(text)
	IS 'stored documents of every sink against a fresh build: missing, extra or different; nothing when all agree';

-- flusso_status gains the shipping figures of the OpenSearch sink.
DROP FUNCTION flusso_status();
CREATE FUNCTION flusso_status()
RETURNS TABLE (index text, phase text, snapshot_done bigint, snapshot_total bigint,
			   worker_pid integer, slot text, confirmed_lsn pg_lsn, lag_bytes bigint,
			   lag_seconds double precision, changes_captured bigint,
			   documents_written bigint, batches bigint, last_error text,
			   last_error_at timestamptz,
			   ship_pending bigint, ship_oldest_seconds double precision,
			   shipped bigint, rejected bigint, ship_error text, ship_error_at timestamptz)
AS 'MODULE_PATHNAME', 'flusso_status'
LANGUAGE C STRICT VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_status()
	IS 'per index: phase, progress and shipping; per database: worker, slot, lag, counters, last error';

REVOKE ALL ON FUNCTION flusso_opensearch_validator(text[], oid) FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_set_sinks(text, text[], jsonb) FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_rejected(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_retry_rejected(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_drop_index(text, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_verify(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flusso_set_sinks(text, text[], jsonb) TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_rejected(text) TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_retry_rejected(text) TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_drop_index(text, boolean) TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_verify(text) TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_status() TO flusso_admin;

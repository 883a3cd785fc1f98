/* flusso--0.6.0--0.7.0.sql: one source per OpenSearch index */

\echo Use "ALTER EXTENSION flusso UPDATE TO '0.7.0'" to load this file. \quit

-- Which database flusso's state belongs to: the cluster's system identifier
-- and the database's OID, with an identity of its own (id) that every
-- OpenSearch index flusso creates records in its _meta, so that a copy of
-- the database (CREATE DATABASE ... TEMPLATE, a restored dump, pg_upgrade)
-- knows at once that it is one, and never writes into, deletes or moves
-- the alias of an index that the database it was copied from owns.  The
-- row whose system identifier and database OID are this database's is its
-- own; any other row came with a copy, and is folded into copied_from
-- when the worker or the shipper starts (source/source.c).  Dumped, so
-- that a restore knows what it was restored from.
CREATE TABLE flusso.source (
	id					uuid PRIMARY KEY DEFAULT pg_catalog.gen_random_uuid(),
	system_identifier	text NOT NULL,
	database_oid		oid NOT NULL,
	database_name		name NOT NULL,
	created_at			timestamptz NOT NULL DEFAULT pg_catalog.now(),
	copied_from			jsonb,
	UNIQUE (system_identifier, database_oid)
);
COMMENT ON TABLE flusso.source
	IS 'flusso: the database its state belongs to, and the one it was copied from';
SELECT pg_catalog.pg_extension_config_dump('flusso.source', '');

-- This database's own identity; its OpenSearch indexes made so far are
-- its own (the shipper records it in their _meta when it first checks
-- them).  The system identifier as pg_controldata prints it, unsigned.
INSERT INTO flusso.source (system_identifier, database_oid, database_name)
SELECT (c.system_identifier::pg_catalog.numeric
		OPERATOR(pg_catalog.+) CASE WHEN c.system_identifier OPERATOR(pg_catalog.<) 0
		THEN 18446744073709551616 ELSE 0 END)::pg_catalog.text,
	d.oid, d.datname
FROM pg_catalog.pg_control_system() c, pg_catalog.pg_database d
WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database();

-- conflict: why the shipper stopped shipping an index, whose alias another
-- source owns (NULL: none); cleared by the shipper once that no longer
-- holds.  take_alias: flusso_adopt() asked that the alias be taken over
-- from whichever source serves it now.
ALTER TABLE flusso.sink
	ADD COLUMN conflict text,
	ADD COLUMN take_alias boolean NOT NULL DEFAULT false;

CREATE FUNCTION flusso_adopt(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'flusso_adopt'
LANGUAGE C STRICT VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_adopt(text)
	IS 'let an index take its OpenSearch alias over from the database that serves it now (a copy meant to take over)';
REVOKE ALL ON FUNCTION flusso_adopt(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flusso_adopt(text) TO flusso_admin;

-- A table an index reads replaced under its name (renamed, moved to
-- another schema, dropped, or another table given its name) has the index
-- compiled against what its names read now, and seeded again: a
-- 'replaced' request, inserted as the transaction commits.
ALTER TABLE flusso.signal DROP CONSTRAINT signal_kind_check;
ALTER TABLE flusso.signal ADD CONSTRAINT signal_kind_check
	CHECK (kind IN ('low', 'high', 'resnapshot', 'retry', 'partitions', 'altered', 'replaced'));

-- What each OpenSearch generation holds, as flusso last wrote it: the
-- SHA-256 (first 16 bytes) of the source of the document it holds for id.
-- A document rebuilt to the same digest is not sent again
-- (src/shipper/ship_digest.c).  A row exists only while no write of that
-- document is in flight or unaccounted for: the shipper deletes it before
-- it sends the document, and writes it again once OpenSearch answered that
-- it stored it.  Unlogged: a crash, a promoted standby or a restored backup
-- starts with none, which only ships the next rebuilt documents again.
-- Not dumped, for the same reason.
CREATE UNLOGGED TABLE flusso.opensearch_digest (
	generation	bigint NOT NULL,
	id			text NOT NULL,
	digest		bytea NOT NULL,
	PRIMARY KEY (generation, id)
);
COMMENT ON TABLE flusso.opensearch_digest
	IS 'flusso: a digest of each document an OpenSearch generation holds, as flusso wrote it';

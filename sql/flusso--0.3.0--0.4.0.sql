/* flusso--0.3.0--0.4.0.sql: partitioned tables, designing an index from the catalog, metrics */

\echo Use "ALTER EXTENSION flusso UPDATE TO '0.4.0'" to load this file. \quit

-- ---- partitioned tables ----------------------------------------------------

-- A partition attached, detached or dropped asks, in stream order, for a
-- seed of the indexes that read its partitioned table.
ALTER TABLE flusso.signal DROP CONSTRAINT signal_kind_check;
ALTER TABLE flusso.signal ADD CONSTRAINT signal_kind_check
	CHECK (kind IN ('low', 'high', 'resnapshot', 'retry', 'partitions'));

-- ---- designing an index from the catalog -----------------------------------

-- A starting definition read from the catalog alone (no row is read).
CREATE FUNCTION flusso_draft(root regclass, depth integer DEFAULT 1)
RETURNS text
AS 'MODULE_PATHNAME', 'flusso_draft'
LANGUAGE C STRICT STABLE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_draft(regclass, integer)
	IS 'a starting YAML definition for an index on a table, read from the catalog, foreign keys followed depth levels deep';

-- The document of a definition not created, built with the caller's rights.
CREATE FUNCTION flusso_preview(definition text, id text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'flusso_preview'
LANGUAGE C STRICT VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_preview(text, text)
	IS 'the document a definition not created builds for one root key now, as the calling role; NULL when none';

-- flusso_mapping(name text) also takes a definition: text that is no index
-- name (^[a-z_][a-z0-9_]*$) is one.  Same function, so grants stay.
COMMENT ON FUNCTION flusso_mapping(text)
	IS 'the OpenSearch index body of an index, or of a definition given as text';

REVOKE ALL ON FUNCTION flusso_draft(regclass, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION flusso_preview(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flusso_draft(regclass, integer) TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_preview(text, text) TO flusso_admin;

-- ---- metrics ---------------------------------------------------------------

-- flusso_status gains the estimated time to catch up: of the index
-- (eta_seconds) and of its OpenSearch shipping (ship_eta_seconds).  Members
-- of pg_monitor may call it (and read flusso_stat): they see figures,
-- phases and the times of errors, not the texts of errors.
DROP FUNCTION flusso_status();
CREATE FUNCTION flusso_status()
RETURNS TABLE (index text, phase text, snapshot_done bigint, snapshot_total bigint,
			   worker_pid integer, slot text, confirmed_lsn pg_lsn, lag_bytes bigint,
			   lag_seconds double precision, changes_captured bigint,
			   documents_written bigint, batches bigint, last_error text,
			   last_error_at timestamptz,
			   ship_pending bigint, ship_oldest_seconds double precision,
			   shipped bigint, rejected bigint, ship_error text, ship_error_at timestamptz,
			   eta_seconds double precision, ship_eta_seconds double precision)
AS 'MODULE_PATHNAME', 'flusso_status'
LANGUAGE C STRICT VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_status()
	IS 'per index: phase, progress, shipping and time to catch up; per database: worker, slot, lag, counters, last error';
REVOKE ALL ON FUNCTION flusso_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flusso_status() TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_status() TO pg_monitor;

-- One row per index and sink, for metrics scrapers, as pg_stat_* views
-- are: the table sink of an index with no flusso.sink row (as
-- src/sink/sink.c decides), else each of its rows.  The worker's figures
-- (lag, counters) are the database's, on every row; pending, shipped and
-- rejected are the OpenSearch sink's (0 for the table sink), and its
-- eta_seconds waits for the shipping too.
CREATE VIEW flusso_stat AS
	SELECT d.oid AS datid, d.datname, s.index, k.sink, k.server_name, s.phase,
		   s.lag_bytes, s.lag_seconds,
		   CASE WHEN k.sink OPERATOR(pg_catalog.=) 'table' THEN s.eta_seconds
				WHEN s.eta_seconds IS NULL OR s.ship_eta_seconds IS NULL THEN NULL
				ELSE pg_catalog.float8larger(s.eta_seconds, s.ship_eta_seconds) END
			   AS eta_seconds,
		   CASE WHEN k.sink OPERATOR(pg_catalog.=) 'table' THEN 0::pg_catalog.int8
				ELSE s.ship_pending END AS pending,
		   CASE WHEN k.sink OPERATOR(pg_catalog.=) 'table' THEN 0::pg_catalog.float8
				ELSE COALESCE(s.ship_oldest_seconds, 0) END AS pending_seconds,
		   s.changes_captured, s.documents_written, s.batches,
		   CASE WHEN k.sink OPERATOR(pg_catalog.=) 'table' THEN 0::pg_catalog.int8
				ELSE s.shipped END AS shipped,
		   CASE WHEN k.sink OPERATOR(pg_catalog.=) 'table' THEN 0::pg_catalog.int8
				ELSE s.rejected END AS rejected,
		   CASE WHEN k.sink OPERATOR(pg_catalog.=) 'opensearch' AND (s.ship_error IS NOT NULL OR s.ship_error_at IS NOT NULL)
				THEN s.ship_error ELSE s.last_error END AS last_error,
		   CASE WHEN k.sink OPERATOR(pg_catalog.=) 'opensearch' AND (s.ship_error IS NOT NULL OR s.ship_error_at IS NOT NULL)
				THEN s.ship_error_at ELSE s.last_error_at END AS last_error_at
	FROM flusso_status() s
	CROSS JOIN LATERAL (
		SELECT x.sink, x.server_name FROM flusso.sink x
		WHERE x.index_name OPERATOR(pg_catalog.=) s.index
		UNION ALL
		SELECT 'table', NULL
		WHERE NOT EXISTS (SELECT FROM flusso.sink x
						  WHERE x.index_name OPERATOR(pg_catalog.=) s.index)) k
	JOIN pg_catalog.pg_database d ON d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database();
COMMENT ON VIEW flusso_stat
	IS 'per index and sink: phase, lag, time to catch up, pending, counters, last error (for metrics scrapers)';
REVOKE ALL ON flusso_stat FROM PUBLIC;
GRANT SELECT ON flusso_stat TO flusso_admin;
GRANT SELECT ON flusso_stat TO pg_monitor;

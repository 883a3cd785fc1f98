/* flusso--0.3.0--0.4.0.sql: partitioned tables, designing an index from the catalog, metrics */

\echo Use "ALTER EXTENSION flusso UPDATE TO '0.4.0'" to load this file. \quit

-- ---- partitioned tables ----------------------------------------------------

-- ---- designing an index from the catalog -----------------------------------

-- ---- metrics ---------------------------------------------------------------

-- flusso_status gains the estimated time to catch up: of the index
-- (eta_seconds) and of its OpenSearch shipping (ship_eta_seconds).  Members
-- of pg_monitor may call it: they see figures, phases and the times of
-- errors, not the texts of errors.
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

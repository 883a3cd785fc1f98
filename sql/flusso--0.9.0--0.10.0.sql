/* flusso--0.9.0--0.10.0.sql: beside a managed PostgreSQL */

\echo Use "ALTER EXTENSION flusso UPDATE TO '0.10.0'" to load this file. \quit

-- flusso_wait can wait for a commit made on a publisher whose changes a
-- subscription applies here: upstream_lsn, a position of the publisher
-- (pg_current_wal_lsn() there after the commit), is first to be applied
-- by the subscription (the one named, or the only one filling tables of
-- flusso's publication), then what it applied is waited for as any
-- change.  A disabled subscription makes it false at once, one applying
-- nothing false at the timeout, each with a NOTICE.  NULL for name,
-- timeout or searchable gives NULL, as when it was strict.
DROP FUNCTION flusso_wait(text, interval, boolean);
CREATE FUNCTION flusso_wait(name text, timeout interval DEFAULT '5s',
							searchable boolean DEFAULT false,
							upstream_lsn pg_lsn DEFAULT NULL,
							subscription text DEFAULT NULL)
RETURNS boolean
AS 'MODULE_PATHNAME', 'flusso_wait'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_wait(text, interval, boolean, pg_lsn, text)
	IS 'wait until every change committed before the call (or before upstream_lsn on the publisher a subscription applies here) is in the index''s sinks; false at the timeout';
REVOKE ALL ON FUNCTION flusso_wait(text, interval, boolean, pg_lsn, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flusso_wait(text, interval, boolean, pg_lsn, text) TO flusso_admin;

-- Each subscription of this database: the tables of flusso's publication
-- it fills, how far it applied the publisher's changes, and why the
-- documents miss the newer ones when it applies none.
CREATE FUNCTION flusso_upstream()
RETURNS TABLE (subscription text, state text, tables integer, tables_copying integer,
			   applied_lsn pg_lsn, confirmed_lsn pg_lsn, last_heard_at timestamptz,
			   apply_errors bigint, problem text)
AS 'MODULE_PATHNAME', 'flusso_upstream'
LANGUAGE C STRICT VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_upstream()
	IS 'per subscription of this database: state, tables filled, publisher position applied, problem';
REVOKE ALL ON FUNCTION flusso_upstream() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flusso_upstream() TO flusso_admin;
GRANT EXECUTE ON FUNCTION flusso_upstream() TO pg_monitor;

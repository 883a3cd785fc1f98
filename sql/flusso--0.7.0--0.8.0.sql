/* flusso--0.7.0--0.8.0.sql: read your own writes */

\echo Use "ALTER EXTENSION flusso UPDATE TO '0.8.0'" to load this file. \quit

-- Wait, for at most timeout, until every change committed before the call
-- is in the index's sinks: the table sink, and for OpenSearch acknowledged
-- in the served index (a realtime GET sees it) and, with searchable,
-- visible to _search.  True once it is; false at the timeout, or at once
-- (with a NOTICE saying why) when it cannot be so now: the index is being
-- seeded or is in error, no worker follows the database, shipping is
-- stopped, failing or holds rejected documents.  Whoever may read the
-- index's documents may wait for them.
CREATE FUNCTION flusso_wait(name text, timeout interval DEFAULT '5s',
							searchable boolean DEFAULT false)
RETURNS boolean
AS 'MODULE_PATHNAME', 'flusso_wait'
LANGUAGE C STRICT VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_wait(text, interval, boolean)
	IS 'wait until every change committed before the call is in the index''s sinks (searchable: and visible to OpenSearch _search); false at the timeout';
REVOKE ALL ON FUNCTION flusso_wait(text, interval, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flusso_wait(text, interval, boolean) TO flusso_admin;

/* flusso--0.8.0--0.9.0.sql: trust, round 3 */

\echo Use "ALTER EXTENSION flusso UPDATE TO '0.9.0'" to load this file. \quit

-- flusso_verify can put right what it finds in OpenSearch: with repair,
-- each missing or different document is sent again as built from the
-- current rows, each extra one deleted, at a version above what flusso
-- gave so far and what OpenSearch holds; repairing takes the owner's
-- rights, as flusso_resnapshot does, reading a reader's.
DROP FUNCTION flusso_verify(text);
CREATE FUNCTION flusso_verify(name text, repair boolean DEFAULT false)
RETURNS TABLE (id text, problem text, sink text)
AS 'MODULE_PATHNAME', 'flusso_verify'
LANGUAGE C STRICT VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_verify(text, boolean)
	IS 'stored documents of every sink against a fresh build: missing, extra or different, nothing when all agree; repair puts OpenSearch''s right';
REVOKE ALL ON FUNCTION flusso_verify(text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flusso_verify(text, boolean) TO flusso_admin;

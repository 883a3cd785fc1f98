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

/* flusso--0.10.0--0.11.0.sql: changes without a full re-seed */

\echo Use "ALTER EXTENSION flusso UPDATE TO '0.11.0'" to load this file. \quit

-- A request may carry what it is about: the predicate of a partial
-- re-snapshot ('rebuild'), or its document ids ('rebuild_ids', a text[]
-- in its text form).  The worker reads it from the stream with the row,
-- so a crash before the documents are built reads it again.
ALTER TABLE flusso.signal ADD COLUMN detail text;
ALTER TABLE flusso.signal DROP CONSTRAINT signal_kind_check;
ALTER TABLE flusso.signal ADD CONSTRAINT signal_kind_check
	CHECK (kind IN ('low', 'high', 'resnapshot', 'retry', 'partitions', 'altered', 'replaced',
					'rebuild', 'rebuild_ids'));

-- flusso_resnapshot(name) seeds the index again, as before; with a
-- predicate over the root table, or a list of document ids, it rebuilds
-- those documents alone, in place.
DROP FUNCTION flusso_resnapshot(text);
CREATE FUNCTION flusso_resnapshot(name text, predicate text DEFAULT NULL,
								  ids text[] DEFAULT NULL)
RETURNS uuid
AS 'MODULE_PATHNAME', 'flusso_resnapshot'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION flusso_resnapshot(text, text, text[])
	IS 'seed an index again from its tables, or rebuild the documents of the root rows a predicate selects or of the ids given, once this request arrives in stream order';
REVOKE ALL ON FUNCTION flusso_resnapshot(text, text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flusso_resnapshot(text, text, text[]) TO flusso_admin;

-- A definition that only gains fields keeps its generations: the shipper
-- puts the mapping of the new fields on each one not retired (remap) before
-- it ships a document that holds them, and the worker rebuilds the
-- documents in place.
ALTER TABLE flusso.opensearch_generation ADD COLUMN remap boolean NOT NULL DEFAULT false;

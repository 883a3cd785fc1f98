/* flusso--0.3.0--0.4.0.sql: partitioned tables, designing an index from the catalog, metrics */

\echo Use "ALTER EXTENSION flusso UPDATE TO '0.4.0'" to load this file. \quit

-- ---- partitioned tables ----------------------------------------------------

-- A partition attached, detached or dropped asks, in stream order, for a
-- seed of the indexes that read its partitioned table.
ALTER TABLE flusso.signal DROP CONSTRAINT signal_kind_check;
ALTER TABLE flusso.signal ADD CONSTRAINT signal_kind_check
	CHECK (kind IN ('low', 'high', 'resnapshot', 'retry', 'partitions'));

-- ---- designing an index from the catalog -----------------------------------

-- ---- metrics ---------------------------------------------------------------

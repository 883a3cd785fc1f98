/* flusso--0.4.0--0.5.0.sql */

\echo Use "ALTER EXTENSION flusso UPDATE TO '0.5.0'" to load this file. \quit

-- DDL that changes what rows read as (a column dropped
-- or renamed, an enum label renamed) or makes a table unlogged, without a
-- row change in the WAL, has the indexes it touches compiled and seeded
-- again: an 'altered' request in flusso.signal, inserted as the
-- transaction commits.
ALTER TABLE flusso.signal DROP CONSTRAINT signal_kind_check;
ALTER TABLE flusso.signal ADD CONSTRAINT signal_kind_check
	CHECK (kind IN ('low', 'high', 'resnapshot', 'retry', 'partitions', 'altered'));

/* flusso--0.3.0--0.4.0.sql: partitioned tables, designing an index from the catalog, metrics */

\echo Use "ALTER EXTENSION flusso UPDATE TO '0.4.0'" to load this file. \quit

-- ---- partitioned tables ----------------------------------------------------

-- ---- designing an index from the catalog -----------------------------------

-- ---- metrics ---------------------------------------------------------------

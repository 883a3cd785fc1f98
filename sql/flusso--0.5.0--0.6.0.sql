/* flusso--0.5.0--0.6.0.sql */

\echo Use "ALTER EXTENSION flusso UPDATE TO '0.6.0'" to load this file. \quit

-- A generation being seeded is filled by the shipper, which reads the root
-- table's keys in key order and ships their documents a range at a time,
-- instead of one flusso.outbox row queued, read and deleted per document.
-- ranges_version: the version those documents ship with, the WAL's insert
-- position when the generation began, below that of every change queued
-- for it since (NULL: a generation begun before 0.6.0, whose seed queues
-- its documents); ranges_after: the last root key shipped (NULL: none
-- yet); ranges_estimate: the root rows the seed estimated when it began;
-- ranges_shipped: the keys read so far, which flusso_status() takes from
-- that estimate to say how many are left; ranges_done: every range is
-- shipped.
ALTER TABLE flusso.opensearch_generation
	ADD COLUMN ranges_version bigint,
	ADD COLUMN ranges_after text[],
	ADD COLUMN ranges_estimate bigint,
	ADD COLUMN ranges_shipped bigint NOT NULL DEFAULT 0,
	ADD COLUMN ranges_done boolean NOT NULL DEFAULT false;

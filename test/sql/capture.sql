--
-- capture: what flusso's output plugin emits, read through the SQL
-- interface.  Every operation, composite keys, key-changing updates,
-- publication filtering, a missing publication, truncate, the columns
-- and reads options, unchanged TOASTed values and dropped columns.
--
CREATE EXTENSION flusso;

CREATE TABLE cap_parent (id int PRIMARY KEY, name text);
CREATE TABLE cap_child (id int PRIMARY KEY, parent_id int NOT NULL, note text);
CREATE TABLE cap_pair (a int, b text, label text, PRIMARY KEY (a, b));
CREATE TABLE cap_hidden (id int PRIMARY KEY);
CREATE TABLE cap_big (id int PRIMARY KEY, body text, n int);
CREATE PUBLICATION flusso FOR TABLE cap_parent, cap_child, cap_pair, cap_big;

SELECT 'slot' FROM pg_create_logical_replication_slot('cap_slot', 'flusso');

CREATE FUNCTION pg_temp.changes(VARIADIC options text[] DEFAULT '{}')
RETURNS SETOF text LANGUAGE sql AS $$
	SELECT flusso_change_text(data)
	FROM pg_logical_slot_peek_binary_changes('cap_slot', NULL, NULL, VARIADIC options)
$$;

-- inserts, an update that keeps the key, one that changes it, a delete
INSERT INTO cap_parent VALUES (1, 'one'), (2, 'two');
UPDATE cap_parent SET name = 'uno' WHERE id = 1;
UPDATE cap_parent SET id = 3 WHERE id = 2;
DELETE FROM cap_parent WHERE id = 3;
SELECT * FROM pg_temp.changes();

-- the default identity logs no old foreign key; FULL does
SELECT pg_replication_slot_advance('cap_slot', pg_current_wal_lsn()) IS NOT NULL AS advanced;
INSERT INTO cap_child VALUES (10, 1, 'a');
UPDATE cap_child SET parent_id = 3 WHERE id = 10;
ALTER TABLE cap_child REPLICA IDENTITY FULL;
UPDATE cap_child SET parent_id = 1 WHERE id = 10;
DELETE FROM cap_child WHERE id = 10;
SELECT * FROM pg_temp.changes('columns', 'public.cap_child:id,parent_id');

-- composite keys, and a key-changing update of one of their columns
SELECT pg_replication_slot_advance('cap_slot', pg_current_wal_lsn()) IS NOT NULL AS advanced;
INSERT INTO cap_pair VALUES (1, 'x', 'first');
UPDATE cap_pair SET b = 'y' WHERE a = 1;
UPDATE cap_pair SET label = 'renamed';
DELETE FROM cap_pair;
SELECT * FROM pg_temp.changes();

-- unpublished tables emit nothing, and a transaction that touched only
-- them produces no output at all; flusso.signal is always emitted
SELECT pg_replication_slot_advance('cap_slot', pg_current_wal_lsn()) IS NOT NULL AS advanced;
INSERT INTO cap_hidden VALUES (1);
BEGIN;
INSERT INTO cap_hidden VALUES (2);
UPDATE cap_hidden SET id = 20 WHERE id = 2;
COMMIT;
INSERT INTO flusso.signal (id, kind, index_name) VALUES ('00000000-0000-0000-0000-00000000000a', 'resnapshot', 'none');
SELECT * FROM pg_temp.changes();

-- the publication is named by an option; one that does not exist at the
-- decoded position means no tables, not an error
SELECT pg_replication_slot_advance('cap_slot', pg_current_wal_lsn()) IS NOT NULL AS advanced;
CREATE PUBLICATION cap_other FOR TABLE cap_hidden;
INSERT INTO cap_hidden VALUES (3);
INSERT INTO cap_parent VALUES (4, 'four');
SELECT * FROM pg_temp.changes('publication', 'cap_other');
SELECT * FROM pg_temp.changes('publication', 'no_such_publication');
DROP PUBLICATION cap_other;

-- truncate
SELECT pg_replication_slot_advance('cap_slot', pg_current_wal_lsn()) IS NOT NULL AS advanced;
TRUNCATE cap_parent, cap_hidden;
SELECT * FROM pg_temp.changes();

-- an unchanged TOASTed value is not logged, and says so; a column dropped
-- or added mid-stream never breaks decoding
SELECT pg_replication_slot_advance('cap_slot', pg_current_wal_lsn()) IS NOT NULL AS advanced;
INSERT INTO cap_big SELECT 1, string_agg(md5(i::text), ''), 0 FROM generate_series(1, 500) i;
UPDATE cap_big SET n = 1;
ALTER TABLE cap_big DROP COLUMN n;
UPDATE cap_big SET body = 'short';
ALTER TABLE cap_big ADD COLUMN n int;
UPDATE cap_big SET n = 2;
SELECT regexp_replace(c, '[0-9a-f]{64,}', '<6400 hex digits>')
FROM pg_temp.changes('columns', 'public.cap_big:id,n,body') c;

-- the header: operation, relation, transaction and commit
SELECT pg_replication_slot_advance('cap_slot', pg_current_wal_lsn()) IS NOT NULL AS advanced;
BEGIN;
INSERT INTO cap_parent VALUES (5, 'five');
SELECT txid_current() AS xid \gset
COMMIT;
SELECT f.op, f.relid = 'cap_parent'::regclass AS relid_ok, f.schema_name, f.table_name,
       f.xid::text = :'xid' AS xid_ok, f.xid = c.xid AS same_as_slot,
       f.commit_lsn > c.lsn AS commit_after_change, f.commit_lsn <= pg_current_wal_lsn() AS lsn_ok,
       f.commit_time <= now() AS time_ok
FROM pg_logical_slot_peek_binary_changes('cap_slot', NULL, NULL) c, flusso_change(c.data) f;

-- a partitioned table: its partitions' changes name the table the columns
-- option names (two levels up here, and a partition whose columns are in
-- another order), a row moved by an UPDATE of the partition key is a
-- delete and an insert of that table, a TRUNCATE of some partitions is R,
-- of all of them T; without the option a partition names itself
CREATE TABLE cap_events (id int, region text, day int, note text,
	PRIMARY KEY (id, region, day)) PARTITION BY LIST (region);
CREATE TABLE cap_events_eu PARTITION OF cap_events FOR VALUES IN ('eu') PARTITION BY RANGE (day);
CREATE TABLE cap_events_eu_1 PARTITION OF cap_events_eu FOR VALUES FROM (0) TO (100);
CREATE TABLE cap_events_eu_2 PARTITION OF cap_events_eu FOR VALUES FROM (100) TO (200);
CREATE TABLE cap_events_us (note text, day int NOT NULL, region text NOT NULL, id int NOT NULL);
ALTER TABLE cap_events ATTACH PARTITION cap_events_us FOR VALUES IN ('us');
ALTER PUBLICATION flusso ADD TABLE cap_events;
SELECT pg_replication_slot_advance('cap_slot', pg_current_wal_lsn()) IS NOT NULL AS advanced;
INSERT INTO cap_events VALUES (1, 'eu', 5, 'a'), (2, 'us', 5, 'b');
UPDATE cap_events SET day = 150 WHERE id = 1;
UPDATE cap_events SET region = 'us' WHERE id = 1;
TRUNCATE cap_events_eu_2;
TRUNCATE cap_events_eu;
TRUNCATE cap_events;
SELECT * FROM pg_temp.changes('columns', 'public.cap_events:id,region,note');
SELECT * FROM pg_temp.changes();

-- the reads option: an UPDATE that logged its whole old row (identity
-- FULL, as cap_child has now) and changed no column an index reads is
-- not emitted; one that changed a read column is, and so is every UPDATE
-- of a table without the option, with the default identity (its old row
-- is not logged), or whose read columns name one it does not have
SELECT pg_replication_slot_advance('cap_slot', pg_current_wal_lsn()) IS NOT NULL AS advanced;
INSERT INTO cap_child VALUES (20, 1, 'a');
UPDATE cap_child SET note = 'b' WHERE id = 20;
UPDATE cap_child SET parent_id = parent_id WHERE id = 20;
UPDATE cap_child SET parent_id = 2, note = NULL WHERE id = 20;
UPDATE cap_parent SET name = 'cinque' WHERE id = 5;
SELECT * FROM pg_temp.changes('columns', 'public.cap_child:id,parent_id',
	'reads', 'public.cap_child:id,parent_id', 'reads', 'public.cap_parent:id');
SELECT * FROM pg_temp.changes('columns', 'public.cap_child:id,parent_id',
	'reads', 'public.cap_child:id,note');
SELECT count(*) FROM pg_temp.changes('columns', 'public.cap_child:id,parent_id',
	'reads', 'public.cap_child:id,parent_id,nosuch');

-- bad options and bad records
SELECT * FROM pg_temp.changes('colour', 'red');
SELECT * FROM pg_temp.changes('columns', 'cap_parent');
SELECT * FROM pg_temp.changes('reads', 'cap_parent:id');
SELECT flusso_change_text('\x0102'::bytea);

-- Records made by hand.  pg_temp.record(value) is an update of public.t
-- (one column, "id") whose old value is the bytes given, with the length
-- they have (len NULL) or the one given, and whose new value is '43': the
-- first is well formed.
CREATE FUNCTION pg_temp.record(value bytea, len bigint DEFAULT NULL) RETURNS bytea
LANGUAGE sql AS $$
	SELECT '\x0155'::bytea || '\x00000007'::bytea || '\x0000000001000000'::bytea
		|| '\x0000000000000000'::bytea || '\x00004000'::bytea
		|| '\x06'::bytea || convert_to('public', 'UTF8') || '\x01'::bytea || convert_to('t', 'UTF8')
		|| '\x01'::bytea || '\x02'::bytea || convert_to('id', 'UTF8')
		|| '\x03'::bytea || '\x74'::bytea
		|| substring(int8send(coalesce(len, length(value))) FROM 5 FOR 4) || value
		|| '\x74'::bytea || '\x00000002'::bytea || convert_to('43', 'UTF8')
$$;
-- true if flusso_change_text() refuses the record with the expected error
CREATE FUNCTION pg_temp.refused(r bytea) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	PERFORM flusso_change_text(r);
	RETURN false;
EXCEPTION WHEN invalid_binary_representation THEN
	RETURN SQLERRM = 'invalid flusso change record';
END
$$;
SELECT flusso_change_text(pg_temp.record(convert_to('42', 'UTF8')));
SELECT op, relid, schema_name, table_name, xid, commit_lsn
FROM flusso_change(pg_temp.record(convert_to('42', 'UTF8')));
-- value lengths that would move the cursor past the end, or wrap around
SELECT flusso_change_text(pg_temp.record(convert_to('42', 'UTF8'), 2147483632));  -- 0x7ffffff0
SELECT flusso_change_text(pg_temp.record(convert_to('42', 'UTF8'), 2147483647));  -- 0x7fffffff
SELECT flusso_change(pg_temp.record(convert_to('42', 'UTF8'), 2147483648));       -- 0x80000000
SELECT flusso_change(pg_temp.record(convert_to('42', 'UTF8'), 4294967295));       -- 0xffffffff
SELECT flusso_change_text(pg_temp.record(convert_to('42', 'UTF8'), 3));
-- truncated at every length, and one byte too many
SELECT count(*) AS truncated_records_refused
FROM generate_series(0, length(pg_temp.record(convert_to('42', 'UTF8'))) - 1) n,
	LATERAL (SELECT substring(pg_temp.record(convert_to('42', 'UTF8')) FROM 1 FOR n) AS r) t
WHERE NOT pg_temp.refused(t.r);
SELECT flusso_change_text(pg_temp.record(convert_to('42', 'UTF8')) || '\x00'::bytea);
-- a name longer than what follows, a NUL inside a value, bytes that are not text
SELECT flusso_change_text(overlay(pg_temp.record(convert_to('42', 'UTF8')) PLACING '\xff'::bytea FROM 34 FOR 1));
SELECT flusso_change_text(pg_temp.record('\x340032'::bytea));
SELECT flusso_change_text(pg_temp.record('\xc328'::bytea));

SELECT pg_drop_replication_slot('cap_slot');
DROP PUBLICATION flusso;
DROP TABLE cap_parent, cap_child, cap_pair, cap_hidden, cap_big, cap_events;
DROP EXTENSION flusso CASCADE;

--
-- partitions: partitioned tables in flusso_check() and flusso_provision().
-- A partitioned table's replica identity is its partitions' (each fixed
-- alone), it is published as itself or as its partitions, and a partition
-- named where its partitioned table belongs is reported.
--
CREATE EXTENSION flusso;

CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE orders (id int, customer_id int NOT NULL, placed date NOT NULL,
	total int NOT NULL, PRIMARY KEY (id, placed)) PARTITION BY RANGE (placed);
CREATE TABLE orders_2025 PARTITION OF orders FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
-- a partition whose columns are in another order, with a unique index that
-- could serve as its identity
CREATE TABLE orders_2026 (total int NOT NULL, placed date NOT NULL, customer_id int NOT NULL,
	id int NOT NULL);
CREATE UNIQUE INDEX orders_2026_customer ON orders_2026 (id, placed, customer_id);
ALTER TABLE orders ATTACH PARTITION orders_2026 FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
CREATE TABLE events (id int, region text NOT NULL, title text NOT NULL,
	PRIMARY KEY (id, region)) PARTITION BY LIST (region);
CREATE TABLE events_eu PARTITION OF events FOR VALUES IN ('eu');
CREATE TABLE events_us PARTITION OF events FOR VALUES IN ('us');

SELECT flusso_create_index('customers', $$
version: 1
table: customers
primary_key: id
fields:
  - text: name
    required: true
  - has_many: orders
    table: orders
    foreign_key: customer_id
    primary_key: id
    fields:
      - integer: total
        required: true
$$);
-- a partition where its partitioned table belongs
SELECT flusso_create_index('eu_events', $$
version: 1
table: events_eu
primary_key: [id, region]
fields:
  - text: title
    required: true
$$);

CREATE FUNCTION pg_temp.checked()
RETURNS TABLE (index text, path text, severity text, message text, hint text)
LANGUAGE sql AS $$
	SELECT index, path, severity, message, hint
	FROM flusso_check()
	WHERE path NOT IN ('slot', 'worker')
$$;
CREATE FUNCTION pg_temp.identities()
RETURNS TABLE (relname name, relreplident "char")
LANGUAGE sql AS $$
	SELECT relname, relreplident FROM pg_class
	WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p')
	ORDER BY relname
$$;

-- a publication a user made, of the partitions (the default): orders is
-- published, as its partitions; the partitions' identities lack the
-- foreign key, each is fixed alone
CREATE PUBLICATION flusso FOR TABLE customers, orders, flusso.signal;
\x on
SELECT * FROM pg_temp.checked();
\x off

SELECT action, sql, applied, blocker FROM flusso_provision()
WHERE action NOT LIKE 'replication slot %';
SELECT pubviaroot FROM pg_publication WHERE pubname = 'flusso';
SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = 'flusso' ORDER BY 1, 2;
SELECT * FROM pg_temp.identities();
-- the foreign key the has_many reads orders by: no index leads with it on
-- either partition (orders_2026's unique index has it last), so each is
-- reported alone; the index the hint gives serves its partition, and one
-- on the partitioned table serves every partition, those added later too
SELECT sql FROM flusso_provision() WHERE action = 'index public.orders_2025 (customer_id)' \gexec
SELECT message, hint FROM pg_temp.checked() WHERE message LIKE '%which no index leads with%';
CREATE INDEX orders_customer ON orders (customer_id);
SELECT message, hint FROM pg_temp.checked() WHERE message LIKE '%which no index leads with%';
-- what remains is the partition named directly
\x on
SELECT * FROM pg_temp.checked();
\x off

-- a partition added later has the default identity: reported alone
CREATE TABLE orders_2027 PARTITION OF orders FOR VALUES FROM ('2027-01-01') TO ('2028-01-01');
SELECT index, path, severity, message, hint FROM pg_temp.checked() WHERE index = 'customers';
SELECT action, sql, applied FROM flusso_provision() WHERE action LIKE 'replica identity %';
SELECT index, path, severity, message FROM pg_temp.checked() WHERE index = 'customers';

-- with its partitioned table named, the index checks clean
SELECT flusso_create_index('eu_events', $$
version: 1
table: events
primary_key: [id, region]
filters:
  - { column: region, op: eq, value: eu }
fields:
  - text: title
    required: true
$$, replace => true);
SELECT action, sql, applied FROM flusso_provision() WHERE action NOT LIKE 'replication slot %';
SELECT * FROM pg_temp.checked();

-- a partition that is a foreign table: its rows are not in the WAL (only
-- a partitioned table without a unique index can have one)
CREATE FOREIGN DATA WRAPPER part_wrapper;
CREATE SERVER part_server FOREIGN DATA WRAPPER part_wrapper;
CREATE TABLE visits (customer_id int NOT NULL, day date NOT NULL) PARTITION BY RANGE (day);
CREATE TABLE visits_2025 PARTITION OF visits FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
ALTER TABLE visits_2025 REPLICA IDENTITY FULL;
CREATE FOREIGN TABLE visits_archive PARTITION OF visits
	FOR VALUES FROM ('2000-01-01') TO ('2025-01-01') SERVER part_server;
SELECT flusso_create_index('visited', $$
version: 1
table: customers
primary_key: id
fields:
  - count: visits
    table: visits
    foreign_key: customer_id
$$);
SELECT index, path, severity, message, hint FROM pg_temp.checked() WHERE index = 'visited';
SELECT flusso_drop_index('visited');
DROP TABLE visits;
DROP SERVER part_server;
DROP FOREIGN DATA WRAPPER part_wrapper;

-- the worker may be seeding: what the drop cascades to varies
SET client_min_messages = warning;
DROP EXTENSION flusso CASCADE;
RESET client_min_messages;
DROP PUBLICATION flusso;
DROP TABLE customers, orders, events;

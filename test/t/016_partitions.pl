# Partitioned tables work like plain ones while the worker streams: a
# partitioned root and a partitioned related table are seeded and
# followed; a row an UPDATE of the partition key moves is one change (its
# document keeps it); a TRUNCATE of some partitions, a partition attached
# with rows, detached (also CONCURRENTLY) or dropped has the indexes that
# read the table seeded again, in stream order, while writes go on; a
# TRUNCATE of every partition empties the root's index without a seed;
# an ATTACH rolled back asks for nothing.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('partitions');
$node->safe_psql('postgres', 'CREATE DATABASE shop');
$node->safe_psql('shop', q{
CREATE EXTENSION flusso;
CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE orders (id int, customer_id int NOT NULL, placed date NOT NULL,
	total int NOT NULL, PRIMARY KEY (id, placed)) PARTITION BY RANGE (placed);
CREATE TABLE orders_2025 PARTITION OF orders FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
CREATE TABLE orders_2026 PARTITION OF orders FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
CREATE TABLE events (id int, region text NOT NULL, title text NOT NULL,
	PRIMARY KEY (id, region)) PARTITION BY LIST (region);
CREATE TABLE events_eu PARTITION OF events FOR VALUES IN ('eu');
CREATE TABLE events_us PARTITION OF events FOR VALUES IN ('us');
INSERT INTO customers SELECT g, 'c' || g FROM generate_series(1, 20) g;
INSERT INTO orders SELECT g, 1 + g % 20, DATE '2025-03-01' + g, g FROM generate_series(1, 400) g;
INSERT INTO events SELECT g, CASE WHEN g % 2 = 0 THEN 'eu' ELSE 'us' END, 'e' || g
FROM generate_series(1, 50) g;
});
$node->safe_psql('shop', q{SELECT flusso_create_index('customers', $$
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
    order_by:
      - { column: id, direction: asc }
    fields:
      - integer: id
        required: true
      - integer: total
        required: true
  - count: orderCount
    table: orders
    foreign_key: customer_id
$$)});
$node->safe_psql('shop', q{SELECT flusso_create_index('events', $$
version: 1
table: events
primary_key: [id, region]
fields:
  - keyword: region
    required: true
  - text: title
    required: true
$$)});
# the orders' foreign key has no index: flusso_provision() only advises one
is( $node->safe_psql('shop',
		q{SELECT count(*) FROM flusso_provision() WHERE NOT applied
		AND action NOT LIKE 'replication slot %' AND action NOT LIKE 'index %'}),
	'0', 'provisioned');
is($node->safe_psql('shop', q{SELECT string_agg(relname || ':' || relreplident::text, ' ' ORDER BY relname)
		FROM pg_class WHERE relname LIKE 'orders%' AND relkind IN ('r', 'p')}),
	'orders:d orders_2025:f orders_2026:f', 'each partition of the related table logs its foreign key');

# Caught up: the slot has confirmed the current position and every index
# is live.
sub caught_up { return database_caught_up($node, 'shop') }

sub verified
{
	my ($name) = @_;
	ok(caught_up(), "$name: caught up");
	is( $node->safe_psql('shop',
			q{SELECT (SELECT count(*) FROM flusso_verify('customers'))
			  + (SELECT count(*) FROM flusso_verify('events'))}),
		'0', "$name: every document equals a fresh build");
}

sub orders_of
{
	my ($customer) = @_;
	return $node->safe_psql('shop',
		qq{SELECT string_agg(o ->> 'id', ',' ORDER BY (o ->> 'id')::int)
		   FROM flusso_docs.customers d, jsonb_array_elements(d.doc -> 'orders') o WHERE d.id = '$customer'});
}

ok( $node->poll_query_until('shop', q{SELECT count(*) = 20 FROM flusso_docs.customers}),
	'the index over a partitioned related table is seeded');
ok( $node->poll_query_until('shop', q{SELECT count(*) = 50 FROM flusso_docs.events}),
	'the index over a partitioned root is seeded');
verified('seeded');
is(orders_of(1), '20,40,60,80,100,120,140,160,180,200,220,240,260,280,300,320,340,360,380,400',
	'a document holds its orders from every partition');

# Rows moved between partitions: the delete and the insert of a move are
# one transaction, which a batch never splits, so the document is built
# once, with the row where it went.
$node->safe_psql('shop', q{
UPDATE orders SET placed = '2026-06-01' WHERE id = 20;
UPDATE orders SET placed = '2026-06-02', customer_id = 2 WHERE id = 40;
UPDATE events SET region = 'eu' WHERE id = 1;
INSERT INTO orders VALUES (1000, 1, '2026-07-01', 5);
});
verified('rows moved between partitions');
is(orders_of(1), '20,60,80,100,120,140,160,180,200,220,240,260,280,300,320,340,360,380,400,1000',
	'an order moved to another partition stays in its document');
like(orders_of(2), qr/(^|,)40(,|$)/, 'one moved to another partition and customer joins that customer');
is( $node->safe_psql('shop', q{SELECT string_agg(id, ',' ORDER BY id) FROM flusso_docs.events WHERE id LIKE '1:%'}),
	'1:eu', 'a root row moved to another partition is the document of its new key, and the old one is gone');

# TRUNCATE of one partition of a related table: seeded again.
my $log = -s $node->logfile;
$node->safe_psql('shop', 'TRUNCATE orders_2025');
ok($node->wait_for_log(qr/table public\.orders was rewritten, so index "customers" will be seeded again/, $log),
	'a TRUNCATE of one partition has the index seeded again');
ok($node->poll_query_until('shop', q{SELECT count(*) = 0 FROM flusso_docs.customers d,
		jsonb_array_elements(d.doc -> 'orders') o WHERE (o ->> 'id')::int < 300 AND (o ->> 'id')::int <> 20 AND (o ->> 'id')::int <> 40}),
	'the truncated partition\'s orders leave their documents');
verified('after a TRUNCATE of one partition');

# While writes go on: attach a table with rows, detach, detach
# concurrently, drop.  The writes leave customers 1 to 4 alone, so that
# only a seed can change their documents.
$node->safe_psql('shop', 'CREATE TABLE stop_writes (stop boolean)');
my ($out, $err) = ('', '');
my $writes = IPC::Run::start(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('shop'), '-c',
	  q{DO $$ DECLARE i int := 0; BEGIN
		WHILE NOT EXISTS (SELECT FROM stop_writes) LOOP
		  i := i + 1;
		  INSERT INTO orders VALUES (10000 + i, 5 + i % 16, DATE '2025-01-01' + i % 300, i);
		  UPDATE customers SET name = 'c' || (i % 16 + 5) || '-' || i WHERE id = i % 16 + 5;
		  COMMIT;
		  PERFORM pg_sleep(0.005);
		END LOOP; END $$} ],
	'>', \$out, '2>', \$err);
$node->poll_query_until('shop', 'SELECT count(*) > 0 FROM orders WHERE id > 10000')
  or die 'the writes do not start';

$node->safe_psql('shop', q{
CREATE TABLE orders_2024 (id int NOT NULL, customer_id int NOT NULL, placed date NOT NULL, total int NOT NULL,
	PRIMARY KEY (id, placed));
ALTER TABLE orders_2024 REPLICA IDENTITY FULL;
INSERT INTO orders_2024 SELECT g, 3, DATE '2024-05-01', g FROM generate_series(5000, 5009) g;
});
$log = -s $node->logfile;
$node->safe_psql('shop', q{ALTER TABLE orders ATTACH PARTITION orders_2024 FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')});
ok( $node->wait_for_log(
		qr/a partition of a table index "customers" reads was attached, detached or dropped, so the index will be seeded again/,
		$log),
	'an ATTACH PARTITION has the index seeded again');
ok( $node->poll_query_until('shop', q{SELECT count(*) = 10 FROM flusso_docs.customers d,
		jsonb_array_elements(d.doc -> 'orders') o WHERE d.id = '3' AND (o ->> 'id')::int BETWEEN 5000 AND 5009}),
	'the rows of an attached partition join their documents');

$node->safe_psql('shop', q{ALTER TABLE orders DETACH PARTITION orders_2024});
ok( $node->poll_query_until('shop', q{SELECT count(*) = 0 FROM flusso_docs.customers d,
		jsonb_array_elements(d.doc -> 'orders') o WHERE (o ->> 'id')::int BETWEEN 5000 AND 5009}),
	'the rows of a detached partition leave their documents');

$node->safe_psql('shop', q{ALTER TABLE orders ATTACH PARTITION orders_2024 FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')});
ok( $node->poll_query_until('shop', q{SELECT count(*) = 10 FROM flusso_docs.customers d,
		jsonb_array_elements(d.doc -> 'orders') o WHERE (o ->> 'id')::int BETWEEN 5000 AND 5009}),
	'attached again, they are back');
$node->safe_psql('shop', q{ALTER TABLE orders DETACH PARTITION orders_2024 CONCURRENTLY});
ok( $node->poll_query_until('shop', q{SELECT count(*) = 0 FROM flusso_docs.customers d,
		jsonb_array_elements(d.doc -> 'orders') o WHERE (o ->> 'id')::int BETWEEN 5000 AND 5009}),
	'and gone again after DETACH PARTITION CONCURRENTLY');

# an ATTACH rolled back asks for nothing: once the worker has read past
# it, it has logged no request
ok($node->poll_query_until('shop', q{SELECT count(*) = 0 FROM flusso.signal WHERE kind = 'partitions'}),
	'the requests so far are answered');
$log = -s $node->logfile;
$node->safe_psql('shop', q{BEGIN;
ALTER TABLE orders ATTACH PARTITION orders_2024 FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
ROLLBACK;});
ok(caught_up(), 'the worker read past an ATTACH rolled back');
unlike(slurp_file($node->logfile, $log), qr/was attached, detached or dropped/,
	'an ATTACH rolled back requests no seed');

$node->safe_psql('shop', q{DROP TABLE orders_2026});
ok( $node->poll_query_until('shop', q{SELECT count(*) = 0 FROM flusso_docs.customers d,
		jsonb_array_elements(d.doc -> 'orders') o WHERE (o ->> 'id')::int IN (20, 40, 1000)}),
	'the rows of a dropped partition leave their documents');

ok($writes->pumpable, 'the writes went on while partitions came and went');
$node->safe_psql('shop', 'INSERT INTO stop_writes VALUES (true)');
$writes->finish;
is($err, '', 'the writes ran without error while partitions came and went');
ok(caught_up(), 'caught up after the writes');
is( $node->safe_psql('shop', q{SELECT count(*) FROM flusso_docs.customers d,
		jsonb_array_elements(d.doc -> 'orders') o}),
	$node->safe_psql('shop', q{SELECT count(*) FROM orders}),
	'every order left is in its document, and no other');
verified('after partitions came and went under writes');
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso.signal WHERE kind = 'partitions'}),
	'0', 'each seed request is gone once answered');

# The table's owner, neither a superuser nor in flusso_admin, attaches a
# partition: the seed is requested all the same.
$node->safe_psql('shop', q{
CREATE ROLE shop_owner LOGIN;
GRANT CREATE ON SCHEMA public TO shop_owner;
ALTER TABLE orders OWNER TO shop_owner;
ALTER TABLE orders_2025 OWNER TO shop_owner;
});
$node->safe_psql('shop', q{
CREATE TABLE orders_2027 (id int NOT NULL, customer_id int NOT NULL, placed date NOT NULL, total int NOT NULL);
ALTER TABLE orders_2027 REPLICA IDENTITY FULL;
INSERT INTO orders_2027 VALUES (7777, 4, '2027-02-02', 7);
ALTER TABLE orders ATTACH PARTITION orders_2027 FOR VALUES FROM ('2027-01-01') TO ('2028-01-01');
}, extra_params => [ '-U', 'shop_owner' ]);
ok( $node->poll_query_until('shop', q{SELECT count(*) = 1 FROM flusso_docs.customers d,
		jsonb_array_elements(d.doc -> 'orders') o WHERE d.id = '4' AND o ->> 'id' = '7777'}),
	'a partition its unprivileged owner attaches joins the documents');
verified('after an ATTACH by the table\'s owner');

# TRUNCATE of every partition of the root: empty, without a seed.
$log = -s $node->logfile;
$node->safe_psql('shop', 'TRUNCATE events');
ok($node->poll_query_until('shop', q{SELECT count(*) = 0 FROM flusso_docs.events}),
	'a TRUNCATE of the partitioned root empties its index');
verified('after a TRUNCATE of the root');
unlike(slurp_file($node->logfile, $log), qr/index "events" will be seeded again/,
	'without seeding it again');

done_testing();

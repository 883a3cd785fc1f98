# The worker and the shipper share flusso.outbox under write load without
# a deadlock: for 15 s two pgbench clients update random orders one row at
# a time, and the worker queues their users' documents again (INSERT ...
# ON CONFLICT DO UPDATE, a slice's ids in hash order) while the shipper
# forgets the rows OpenSearch took (a DELETE in version order), both on
# the same 2,000 hot rows.  No "deadlock detected" in the log, the shipper
# never exits with an error, the index is not seeded again, and every
# document of both sinks verifies.  (Before the shipper skipped the rows
# the worker holds, this load deadlocked about every 2 s, each deadlock
# putting the index in error and seeding it again.)

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available();

my $users = 2000;
my $orders = 10000;
my $seconds = 15;

my $os = OpenSearchNode->start('outbox_load');
my $node = flusso_node('outbox_load');
$node->safe_psql('postgres', 'CREATE DATABASE shop');
$node->safe_psql('shop', qq{
CREATE EXTENSION flusso;
CREATE TABLE users (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE orders (id int PRIMARY KEY, user_id int NOT NULL REFERENCES users, amount bigint NOT NULL);
CREATE INDEX ON orders (user_id);
INSERT INTO users SELECT g, 'user ' || g FROM generate_series(1, $users) g;
INSERT INTO orders SELECT g, 1 + g % $users, 0 FROM generate_series(1, $orders) g;
SELECT flusso_create_index('users', \$\$
version: 1
table: users
primary_key: id
fields:
  - text: name
    required: true
  - count: orderCount
    table: orders
    foreign_key: user_id
  - sum: spent
    table: orders
    foreign_key: user_id
    column: amount
    value_type: long
\$\$);
SELECT count(*) FROM flusso_provision();
});
my $url = $os->url;
$node->safe_psql('shop', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$url', index_prefix 't-')});
$node->safe_psql('shop', q{SELECT flusso_set_sinks('users', ARRAY['table', 'search'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'shop', 'users'), 'seeded into both sinks');
my $generation = $node->safe_psql('shop',
	q{SELECT generation FROM flusso.opensearch_generation WHERE index_name = 'users'});

# The load: single-row updates of random orders, each rebuilding its
# user's document, from two clients at once.
my $offset = -s $node->logfile;
my $shipped = $node->safe_psql('shop', q{SELECT shipped FROM flusso_status() WHERE index = 'users'});
$node->pgbench(
	"--no-vacuum --client=2 --time=$seconds --rate=3000", 0,
	[qr/processed: \d+/], [qr/^$/],
	'the load runs',
	{ '020_orders' => qq{\\set id random(1, $orders)
UPDATE orders SET amount = amount + 1 WHERE id = :id;
} },
	'shop');
ok(OpenSearchNode::caught_up($node, 'shop', 'users'), 'caught up after the load');
# the shipper shipped while the worker queued: more than one bulk's worth
cmp_ok($node->safe_psql('shop', q{SELECT shipped FROM flusso_status() WHERE index = 'users'}),
	'>', $shipped + 1000, 'the shipper shipped during the load');

my $log = slurp_file($node->logfile, $offset);
is(scalar(() = $log =~ /deadlock detected/g), 0, 'no deadlock');
is(scalar(() = $log =~ /background worker "flusso shipper" \(PID \d+\) exited with exit code [1-9]/g), 0,
	'the shipper never exited with an error');
is(scalar(() = $log =~ /seeding index "users"/g), 0, 'the index was not seeded again');
is($node->safe_psql('shop', q{SELECT string_agg(generation || ' ' || state, ', ')
	FROM flusso.opensearch_generation WHERE index_name = 'users'}),
	"$generation served", 'the generation seeded before the load still serves, alone');
is($node->safe_psql('shop', q{SELECT phase || ' ' || (last_error IS NULL) FROM flusso_status()
	WHERE index = 'users'}), 'live true', 'the index is live, with no error');
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_verify('users')}), '0',
	'flusso_verify() finds no document wrong in either sink');
is_deeply($os->differences($node, 'shop', 'users', 't-users', 'SELECT id::text FROM users'), [],
	'every document in OpenSearch equals flusso_build()');

done_testing();

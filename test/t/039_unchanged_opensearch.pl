# No work for OpenSearch when a document did not change, with the
# OpenSearch sink alone and the tables' default replica identity (which
# does not let the output plugin prove that an UPDATE touched nothing an
# index reads): the shipper builds each queued document and sends it only
# if the generation does not hold that very source (a digest of what it
# stored, src/shipper/ship_digest.c).  A column no index reads, moved on
# 1,000 users, and 1,000 orders set to the status they had ship nothing,
# and OpenSearch keeps each document at its version; a real change ships
# at once, alone.
#
# Nothing that OpenSearch may not hold is taken as held: a bulk whose
# response was lost (OpenSearch stored it, the shipper never heard) leaves
# no digest, so a row set back to what it was before ships that again; a
# truncated root table's generation forgets what it held, so rows inserted
# again as they were ship again; a new generation (flusso_resnapshot)
# learns what it holds as its ranges ship.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available('python3');

my $os = OpenSearchNode->start('unchanged_os');
my $proxy = FaultProxy->start($os);
my $node = flusso_node('unchanged_os');
my $users = 1500;
my $orders = 3000;

$node->safe_psql('postgres', 'CREATE DATABASE shop');
$node->safe_psql(
	'shop', qq{
	CREATE EXTENSION flusso;
	CREATE TABLE users (id bigint PRIMARY KEY, email text NOT NULL, name text NOT NULL,
						created_at timestamptz NOT NULL);
	CREATE TABLE orders (id bigint PRIMARY KEY, user_id bigint NOT NULL, total numeric(10,2) NOT NULL,
						 status text NOT NULL, created_at timestamptz NOT NULL);
	CREATE INDEX ON orders (user_id);
	INSERT INTO users SELECT i, 'user' || i || '\@example.com', 'User ' || i,
		'2024-01-01'::timestamptz + i * interval '1 hour' FROM generate_series(1, $users) i;
	INSERT INTO orders SELECT i, 1 + i % $users, (i % 1000) / 10.0,
		(ARRAY['new', 'paid', 'shipped'])[1 + i % 3], '2024-01-01'::timestamptz + i * interval '1 minute'
		FROM generate_series(1, $orders) i;
	CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
		OPTIONS (url '@{[ $proxy->url ]}', index_prefix 'u-', connect_timeout '1', request_timeout '4')});
$node->safe_psql(
	'shop', q{SELECT flusso_create_index('users', $$
version: 1
table: users
primary_key: id
fields:
  - keyword: email
    required: true
  - text: name
    required: true
  - has_many: orders
    table: orders
    foreign_key: user_id
    primary_key: id
    order_by: [ { column: created_at, direction: desc } ]
    limit: 5
    fields:
      - decimal: total
        required: true
      - keyword: status
        required: true
  - count: orderCount
    table: orders
    foreign_key: user_id
$$)});
$node->safe_psql('shop', 'SELECT count(*) FROM flusso_provision()');
$node->safe_psql('shop', q{SELECT flusso_set_sinks('users', ARRAY['search'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'shop', 'users'), 'seeded into OpenSearch alone');
is($os->count('u-users'), $users, "OpenSearch holds the $users documents");
is($node->safe_psql('shop',
	q{SELECT count(*) FROM flusso.opensearch_digest d JOIN flusso.opensearch_generation g USING (generation)
	  WHERE g.index_name = 'users' AND g.state = 'served'}),
	$users, 'what the served generation holds is known, document by document');

sub caught_up { return OpenSearchNode::caught_up($node, 'shop', 'users') }

sub growth
{
	return OpenSearchNode::ship_growth($node, 'shop', 'users', $_[0], \&caught_up);
}

sub version_of { return $os->version_of('u-users', $_[0]) }

sub name_in_opensearch
{
	my ($status, $doc) = $os->request('GET', "/u-users/_doc/$_[0]");
	return $status == 200 ? $doc->{_source}{name} : "HTTP $status";
}

my %version = map { $_ => version_of($_) } (1, 2, 1200);

my $grown = growth(q{UPDATE users SET created_at = created_at + interval '1 day' WHERE id <= 1000});
is($grown->{queued}, 1000, 'a column the index does not read, on 1,000 users: 1,000 documents queued');
is($grown->{shipped}, 0, 'and none shipped: OpenSearch holds each as it was built');
is(version_of(1), $version{1}, 'the OpenSearch document keeps its version');

$grown = growth(q{UPDATE orders SET status = status WHERE id <= 1000});
is($grown->{shipped}, 0, '1,000 orders set to the status they had: nothing shipped');
is(version_of(2), $version{2}, 'the OpenSearch document still keeps its version');

$grown = growth(q{UPDATE users SET name = name || ' renamed' WHERE id <= 10});
is($grown->{shipped}, 10, 'a real change on 10 users: 10 documents shipped');
is(name_in_opensearch(3), 'User 3 renamed', 'OpenSearch has the change');
isnt(version_of(1), $version{1}, 'at a new version');
is(version_of(1200), $version{1200}, 'a document the change did not touch keeps its version');

$grown = growth(q{UPDATE orders SET status = 'refunded' WHERE id = 7});
is($grown->{shipped}, 1, "a child's read column changed: its parent shipped");

# A bulk OpenSearch stored whose answer was lost (the connection reset
# halfway through the response): the shipper cannot know it was stored,
# so when the row is set back to what it was, that is sent again, and
# OpenSearch ends with it.
$proxy->fault('reset');
$node->safe_psql('shop', q{UPDATE users SET name = 'Lost in transit' WHERE id = 20});
ok(poll_until(sub { name_in_opensearch(20) eq 'Lost in transit' }),
	'a change reached OpenSearch, its answer lost');
ok(poll_until(sub { $proxy->answered('reset') >= 1 }), 'the proxy reset the answer');
my $lsn = $node->safe_psql('shop',
	q{UPDATE users SET name = 'User 20' WHERE id = 20; SELECT pg_current_wal_insert_lsn()});
ok($node->poll_query_until('shop',
	qq{SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name LIKE 'flusso_%'}),
	'the row set back to what it was is queued while answers are lost');
$proxy->fault('pass');
ok(caught_up(), 'caught up once answers go through');
is(name_in_opensearch(20), 'User 20', 'OpenSearch ends with the row as it is, not the change whose answer was lost');

# A truncated root table empties the generation: what it held is forgotten,
# and the rows inserted again as they were are all shipped again.
$node->safe_psql('shop', 'CREATE TABLE users_saved AS SELECT * FROM users');
ok(caught_up(), 'caught up');
$grown = growth(q{TRUNCATE users});
is($os->count('u-users'), 0, 'TRUNCATE: OpenSearch holds no document');
$grown = growth(q{INSERT INTO users SELECT * FROM users_saved});
is($grown->{shipped}, $users, 'the rows inserted again as they were: every document shipped again');
is($os->count('u-users'), $users, "OpenSearch holds the $users documents again");

# A new generation learns what it holds as its ranges ship.
$grown = growth(q{SELECT flusso_resnapshot('users')});
is($grown->{shipped}, $users, "flusso_resnapshot(): the $users documents shipped into a new index");
$grown = growth(q{UPDATE users SET created_at = created_at - interval '1 day'});
is($grown->{shipped}, 0, 'in which an unread column moved on every user ships nothing');

is_deeply($os->differences($node, 'shop', 'users', 'u-users', 'SELECT id::text FROM users'), [],
	'every document equals flusso_build()');
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso.opensearch_digest d
	WHERE NOT EXISTS (SELECT FROM flusso.opensearch_generation g WHERE g.generation = d.generation)}),
	0, 'no digest is left of a generation forgotten');

done_testing();

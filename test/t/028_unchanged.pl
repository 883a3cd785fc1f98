# Nothing shipped or written for nothing: an UPDATE of a table whose old
# rows are logged whole (REPLICA IDENTITY FULL) that changes no column an
# index reads (a column no index reads, or a read column set to the value
# it had) is not emitted by the output plugin, so it builds nothing, writes
# nothing to the documents table and queues nothing in the outbox, and
# OpenSearch keeps each document at its version; that holds for a child
# table too, while moving a child to another parent ships both parents.
# A document that did change is queued and shipped, alone; one deleted and
# inserted again as it was is shipped again; flusso_resnapshot() ships
# every document into a new OpenSearch index, by ranges, queueing none.  Rows queued are counted by
# the outbox's sequence (one value per row queued), documents written by
# flusso_status().documents_written, those shipped by its shipped.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available();

my $os = OpenSearchNode->start('unchanged');
my $node = flusso_node('unchanged');
my $url = $os->url;
my $n = 40;

$node->safe_psql('postgres', 'CREATE DATABASE shop');
$node->safe_psql(
	'shop', qq{
	CREATE EXTENSION flusso;
	CREATE TABLE users (id int PRIMARY KEY, name text NOT NULL, score int NOT NULL, note text);
	INSERT INTO users SELECT i, 'user ' || i, i, 'note' FROM generate_series(1, $n) i;
	CREATE TABLE orders (id int PRIMARY KEY, user_id int NOT NULL, amount int NOT NULL, memo text);
	INSERT INTO orders SELECT i, 1 + i % $n, i, 'memo' FROM generate_series(1, 2 * $n) i;
	ALTER TABLE users REPLICA IDENTITY FULL;
	ALTER TABLE orders REPLICA IDENTITY FULL;
	CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url '$url', index_prefix 't-')});
$node->safe_psql(
	'shop', q{SELECT flusso_create_index('people', $$
version: 1
table: users
primary_key: id
fields:
  - keyword: name
    required: true
  - integer: score
    required: true
  - has_many: orders
    table: orders
    foreign_key: user_id
    primary_key: id
    fields:
      - integer: amount
        required: true
$$)});
$node->safe_psql('shop', 'SELECT count(*) FROM flusso_provision()');
$node->safe_psql('shop',
	q{SELECT flusso_set_sinks('people', ARRAY['table', 'search'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'shop', 'people'), 'seeded into both sinks');
is($os->count('t-people'), $n, "OpenSearch holds the $n documents");


# The counters' growth over $sql, once caught up.
sub growth
{
	return OpenSearchNode::ship_growth($node, 'shop', 'people', $_[0],
		sub { OpenSearchNode::caught_up($node, 'shop', 'people') });
}

sub version_of { return $os->version_of('t-people', $_[0]) }

my %version = map { $_ => version_of($_) } (1, 6);
my $stored = $node->safe_psql('shop', 'SELECT max(updated_at) FROM flusso_docs.people');

is_deeply(growth(q{UPDATE users SET note = 'changed'}),
	{ queued => 0, written => 0, shipped => 0 },
	"a column the index does not read, on $n rows: nothing written, queued or shipped");
is(version_of(1), $version{1}, 'the OpenSearch document keeps its version');
is_deeply(growth(q{UPDATE users SET score = score}),
	{ queued => 0, written => 0, shipped => 0 },
	'a read column set to the value it had: nothing written, queued or shipped');
is(version_of(1), $version{1}, 'the OpenSearch document still keeps its version');
is($node->safe_psql('shop', 'SELECT max(updated_at) FROM flusso_docs.people'), $stored,
	'no document of the table sink was written');

is_deeply(growth(q{UPDATE orders SET memo = 'changed'}),
	{ queued => 0, written => 0, shipped => 0 },
	'a child column the index does not read: nothing written, queued or shipped');
is_deeply(growth(q{UPDATE orders SET user_id = user_id, amount = amount}),
	{ queued => 0, written => 0, shipped => 0 },
	"a child's read columns set to the values they had: nothing written, queued or shipped");
is(version_of(1), $version{1}, 'the OpenSearch document keeps its version still');
is_deeply(growth(q{UPDATE orders SET user_id = 3 WHERE id = 1}),
	{ queued => 2, written => 4, shipped => 2 },
	'a child moved to another parent: both parents written, queued and shipped');

is_deeply(growth(q{UPDATE users SET score = score + 100 WHERE id <= 5}),
	{ queued => 5, written => 10, shipped => 5 },
	'a read column changed on 5 rows: 5 documents written, queued and shipped');
my (undef, $doc) = $os->request('GET', '/t-people/_doc/1');
is($doc->{_source}{score}, 101, 'OpenSearch has the change');
isnt($doc->{_version}, $version{1}, 'with a new version');
is(version_of(6), $version{6}, 'a document the change did not touch keeps its version');

is_deeply(growth(q{DELETE FROM users WHERE id = 7}),
	{ queued => 1, written => 2, shipped => 1 }, 'a delete is queued and shipped');
is(version_of(7), 'HTTP 404', 'the document is gone from OpenSearch');
is_deeply(growth(q{INSERT INTO users VALUES (7, 'user 7', 7, 'note')}),
	{ queued => 1, written => 2, shipped => 1 },
	'inserted again as it was: queued and shipped');
($doc) = ($os->request('GET', '/t-people/_doc/7'))[1];
is_deeply($doc->{_source}{score}, 7, 'OpenSearch has it again');

my $concrete = $node->safe_psql('shop',
	q{SELECT concrete FROM flusso.opensearch_generation WHERE index_name = 'people'});
my $grown = growth(q{SELECT flusso_resnapshot('people')});
is($grown->{queued}, 0, "flusso_resnapshot(): none of the $n documents is queued (the shipper seeds by ranges)");
is($grown->{shipped}, $n, 'all are shipped');
my $served = $node->safe_psql('shop',
	q{SELECT concrete FROM flusso.opensearch_generation WHERE index_name = 'people'});
isnt($served, $concrete, 'into a new OpenSearch index');
is_deeply($os->alias_targets('t-people'), [$served], 'which the alias serves');
is($os->count('t-people'), $n, "with the $n documents");
is_deeply($os->differences($node, 'shop', 'people', 't-people', 'SELECT id::text FROM users'), [],
	'every document equals flusso_build()');

done_testing();

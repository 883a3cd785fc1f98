# With both sinks on, OpenSearch mirrors the table sink: the shipper ships
# what the table sink stores instead of building each document again, and
# the worker queues only the documents whose table-sink write changed
# something.  With the default replica identity an UPDATE that sets a
# column to the value it had builds every document, which the table sink
# finds unchanged: nothing is queued or shipped.  A changed document is
# queued and shipped once, with the table sink's content (a row queued by
# hand ships what the table sink holds, not a document built from the
# rows).  Right after a new generation serves (flusso_resnapshot()), the
# first documents written are all queued again, as before.  Deletes and
# inserts of one id in quick succession, shipped while they happen, leave
# OpenSearch equal to the table sink and to flusso_build().  Rows queued
# are counted by the outbox's sequence, documents written by
# flusso_status().documents_written, those shipped by its shipped.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JSON::PP;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available();

my $os = OpenSearchNode->start('mirror');
my $node = flusso_node('mirror');
my $url = $os->url;
my $n = 30;

$node->safe_psql('postgres', 'CREATE DATABASE shop');
$node->safe_psql(
	'shop', qq{
	CREATE EXTENSION flusso;
	CREATE TABLE users (id int PRIMARY KEY, name text NOT NULL, score int NOT NULL);
	INSERT INTO users SELECT i, 'user ' || i, i FROM generate_series(1, $n) i;
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
$$)});
$node->safe_psql('shop', 'SELECT count(*) FROM flusso_provision()');
$node->safe_psql('shop',
	q{SELECT flusso_set_sinks('people', ARRAY['table', 'search'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'shop', 'people'), 'seeded into both sinks');
is($os->count('t-people'), $n, "OpenSearch holds the $n documents");


# Both sinks caught up, and the worker has read the WAL past its last write.
sub settled
{
	return 0 unless OpenSearchNode::caught_up($node, 'shop', 'people');
	my $lsn = $node->safe_psql('shop', 'SELECT pg_current_wal_insert_lsn()');
	return $node->poll_query_until('shop',
		qq{SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots
		   WHERE slot_name LIKE 'flusso_%'});
}

# The counters' growth over $sql, once caught up.
sub growth
{
	return OpenSearchNode::ship_growth($node, 'shop', 'people', $_[0], \&settled);
}

sub version_of { return $os->version_of('t-people', $_[0]) }

# OpenSearch holds what the table sink holds, and what flusso_build() builds.
sub mirrored
{
	my ($what) = @_;
	my $json = JSON::PP->new->canonical;
	my $docs = $os->documents('t-people');
	my %table = map { my ($id, $doc) = split /\|/, $_, 2; ($id => decode_json($doc)) }
	  split /\n/, $node->safe_psql('shop', 'SELECT id, doc FROM flusso_docs.people');
	is_deeply([ sort keys %$docs ], [ sort keys %table ], "$what: the same ids in both sinks");
	is_deeply([ grep { $json->encode($docs->{$_}) ne $json->encode($table{$_} // {}) } sort keys %$docs ],
		[], "$what: the same documents in both sinks");
	is_deeply($os->differences($node, 'shop', 'people', 't-people', 'SELECT id::text FROM users'),
		[], "$what: every document equals flusso_build()");
}

# The first documents written once the generation serves are all queued
# (the shipper built documents until then); then the worker reads on.
is_deeply(growth(q{UPDATE users SET score = score + 1000 WHERE id = 1}),
	{ queued => 1, written => 2, shipped => 1 }, 'a changed document: written, queued, shipped');

my %version = map { $_ => version_of($_) } (1, 2, 11);
is_deeply(growth(q{UPDATE users SET name = name}),
	{ queued => 0, written => 0, shipped => 0 },
	"a read column set to the value it had, on $n rows (default replica identity): nothing queued or shipped");
is(version_of(2), $version{2}, 'the OpenSearch document keeps its version');

is_deeply(growth(q{UPDATE users SET name = name || '.' WHERE id <= 10}),
	{ queued => 10, written => 20, shipped => 10 },
	'a read column changed on 10 rows: each document written, queued and shipped once');
isnt(version_of(2), $version{2}, 'with a new version');
is(version_of(11), $version{11}, 'a document the change did not touch keeps its version');
mirrored('after the changes');

# A row queued by hand ships what the table sink holds: not built again.
$node->safe_psql('shop',
	q{UPDATE flusso_docs.people SET doc = doc || '{"name": "stored"}' WHERE id = '5'});
$node->safe_psql('shop', q{INSERT INTO flusso.outbox (index_name, id, version, seed_only)
	VALUES ('people', '5', pg_current_wal_insert_lsn() - '0/0', false)});
ok(settled(), 'the row queued by hand is shipped');
my (undef, $doc) = $os->request('GET', '/t-people/_doc/5');
is($doc->{_source}{name}, 'stored', 'OpenSearch got the document the table sink stores');
is_deeply(growth(q{UPDATE users SET name = 'five' WHERE id = 5}),
	{ queued => 1, written => 2, shipped => 1 }, 'the document changed again: shipped');

# Deletes and inserts of the same ids while the shipper ships them.
$node->safe_psql('shop', join ";\n", map {
	my $id = 20 + $_ % 4;
	(   "DELETE FROM users WHERE id = $id",
		"INSERT INTO users VALUES ($id, 'back $_', $_)",
		"UPDATE users SET name = 'user $id' WHERE id = $id",
		"DELETE FROM users WHERE id = $id",
		"INSERT INTO users VALUES ($id, 'user $id', $id)")
} 1 .. 40);
$node->safe_psql('shop', 'DELETE FROM users WHERE id = 23');
ok(settled(), 'caught up after deletes and inserts');
mirrored('after deletes and inserts');

# A new generation: the first documents written are all queued again.
ok(defined $node->safe_psql('shop', q{SELECT flusso_resnapshot('people')}), 'flusso_resnapshot()');
ok(settled(), 'the new generation serves');
my $rows = $n - 1;
is(growth(q{UPDATE users SET name = name})->{queued}, $rows,
	'the first documents written after it are all queued');
is_deeply(growth(q{UPDATE users SET name = name}),
	{ queued => 0, written => 0, shipped => 0 }, 'then nothing is queued for nothing again');
mirrored('after flusso_resnapshot()');

done_testing();

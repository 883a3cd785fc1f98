# A generation is seeded by ranges: the shipper reads the root keys in key
# order and ships their documents a bulk at a time, and the seed queues
# none of them in flusso.outbox (its sequence does not move).  Rows a
# soft delete leaves out are passed over; an empty table serves at once;
# a composite key is walked as a row value.  Changes made while the
# ranges ship win over them.  A shipper ended mid-seed resumes after the
# last key it recorded: OpenSearch indexes each document about once, not
# twice.  Bulks refused for now, or cut off, are shipped again: no key is
# passed over.  A database still at 0.5.0 seeds by the queue, and finishes
# so a seed that ALTER EXTENSION UPDATE overtakes.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available();

my $os = OpenSearchNode->start('ranges');
my $node = flusso_node('ranges');
my $url = $os->url;
my $n = 6000;

$node->safe_psql('postgres', 'CREATE DATABASE shop');
$node->safe_psql(
	'shop', qq{
	CREATE EXTENSION flusso;
	CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL, gone boolean NOT NULL);
	INSERT INTO items SELECT i, 'item ' || i, i % 10 = 0 FROM generate_series(1, $n) i;
	CREATE TABLE stock (shop text, sku int, units int NOT NULL, PRIMARY KEY (shop, sku));
	INSERT INTO stock SELECT s, i, i FROM unnest(ARRAY['b:1', 'a', 'c\\d']) s, generate_series(1, 40) i;
	CREATE TABLE nothing (id int PRIMARY KEY, name text NOT NULL);
	CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
		OPTIONS (url '$url', index_prefix 't-', bulk_max_documents '250')});
$node->safe_psql(
	'shop', q{SELECT flusso_create_index('items', $$
version: 1
table: items
primary_key: id
soft_delete:
  column: gone
fields:
  - keyword: name
    required: true
$$)});
$node->safe_psql(
	'shop', q{SELECT flusso_create_index('stock', $$
version: 1
table: stock
primary_key: [shop, sku]
fields:
  - integer: units
    required: true
$$)});
$node->safe_psql(
	'shop', q{SELECT flusso_create_index('nothing', $$
version: 1
table: nothing
primary_key: id
fields:
  - keyword: name
    required: true
$$)});
$node->safe_psql('shop', 'SELECT count(*) FROM flusso_provision()');
$node->poll_query_until('shop', q{SELECT bool_and(phase = 'live') FROM flusso_status()})
  or die 'the indexes are not live';

sub queued { return OpenSearchNode::ship_counters($node, 'shop', 'items')->{queued} }

sub ids_of
{
	my ($table) = @_;
	return "SELECT id::text FROM $table";
}

# 1. Seeded by ranges, with nothing queued.
my $queued = queued();
$node->safe_psql('shop', q{
	SELECT flusso_set_sinks(i, ARRAY['search'], '{"replicas": 0}')
	FROM unnest(ARRAY['items', 'stock', 'nothing']) i});
ok(OpenSearchNode::caught_up($node, 'shop', $_), "$_ seeded") for qw(items stock nothing);
is(queued(), $queued, 'the seeds queued no document in flusso.outbox');
is($node->safe_psql('shop', q{SELECT string_agg(index_name || ' ' || ranges_done, ', ' ORDER BY index_name)
		FROM flusso.opensearch_generation WHERE state = 'served'}),
	'items true, nothing true, stock true', 'each served generation shipped its ranges');
is($os->count('t-items'), $n - $n / 10, 'every item a soft delete keeps is in OpenSearch, no other');
is_deeply($os->differences($node, 'shop', 'items', 't-items', ids_of('items')), [],
	'each equals flusso_build()');
is_deeply($os->differences($node, 'shop', 'stock', 't-stock',
		q{SELECT replace(replace(shop, '\\', '\\\\'), ':', '\\:') || ':' || sku FROM stock}),
	[], 'the composite keys, escaped, each equal flusso_build()');
is($os->count('t-stock'), 120, 'the 120 stock rows');
is($os->count('t-nothing'), 0, 'the empty table served, empty');

# 2. Changes while the ranges ship win: a slow node (bulks of 20) and a
# writer that renames, deletes and inserts while a new generation fills.
$node->safe_psql('shop', q{ALTER SERVER search OPTIONS (SET bulk_max_documents '20')});
$node->safe_psql('shop', q{SELECT flusso_resnapshot('items')});
$node->poll_query_until('shop', q{SELECT ranges_after IS NOT NULL FROM flusso.opensearch_generation
		WHERE index_name = 'items' AND state IN ('seeding', 'seeded')})
  or die 'the new generation does not ship ranges';
for my $round (1 .. 10)
{
	$node->safe_psql('shop', qq{
		UPDATE items SET name = name || ' r$round' WHERE id % 97 = $round;
		DELETE FROM items WHERE id = 600 * $round - 1;
		UPDATE items SET gone = NOT gone WHERE id = 600 * $round - 3;
		INSERT INTO items VALUES ($n + $round, 'late $round', false)});
}
$node->safe_psql('shop', q{ALTER SERVER search OPTIONS (SET bulk_max_documents '1000')});
ok(OpenSearchNode::caught_up($node, 'shop', 'items'), 'the new generation serves');
is_deeply($os->differences($node, 'shop', 'items', 't-items', ids_of('items')), [],
	'OpenSearch holds every change made while the ranges shipped');

# 3. The shipper ended mid-seed (its bulks in flight abandoned) resumes
# after the last key it recorded.
my $before = $os->request('GET', '/_stats/indexing');
$node->safe_psql('shop', q{ALTER SERVER search OPTIONS (SET bulk_max_documents '10')});
$node->safe_psql('shop', q{SELECT flusso_resnapshot('items')});
$node->poll_query_until('shop', q{SELECT ranges_after[1]::int > 2000
		FROM flusso.opensearch_generation WHERE index_name = 'items' AND state IN ('seeding', 'seeded')})
  or die 'the ranges do not move';
my $concrete = $node->safe_psql('shop', q{SELECT concrete FROM flusso.opensearch_generation
		WHERE index_name = 'items' AND state IN ('seeding', 'seeded')});
my ($pending, $left) = split /\|/, $node->safe_psql('shop', q{SELECT s.ship_pending,
		(SELECT count(*) FROM items WHERE id > (SELECT ranges_after[1]::int FROM flusso.opensearch_generation
		 WHERE index_name = 'items' AND state IN ('seeding', 'seeded')))
		FROM flusso_status() s WHERE s.index = 'items'});
cmp_ok(abs($pending - $left), '<=', 0.1 * $left + 50,
	"flusso_status() counts the documents the ranges have left, about ($pending for $left keys)");
my $pid = $node->safe_psql('shop', q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso shipper'});
$node->safe_psql('shop', "SELECT pg_terminate_backend($pid)");
$node->poll_query_until('shop', qq{SELECT count(*) = 1 FROM pg_stat_activity
		WHERE backend_type = 'flusso shipper' AND pid <> $pid})
  or die 'no new shipper';
$node->safe_psql('shop', q{ALTER SERVER search OPTIONS (SET bulk_max_documents '1000')});
ok(OpenSearchNode::caught_up($node, 'shop', 'items'), 'with a new shipper, the generation serves');
is_deeply($os->differences($node, 'shop', 'items', 't-items', ids_of('items')), [],
	'every document equals flusso_build()');
my ($status, $stats) = $os->request('GET', "/$concrete/_stats/indexing");
my $indexed = $stats->{indices}{$concrete}{primaries}{indexing}{index_total};
my $docs = $node->safe_psql('shop', 'SELECT count(*) FROM items WHERE NOT gone');
is($status, 200, 'the generation the ranges went to serves');
cmp_ok($indexed // 0, '>=', $docs, "OpenSearch indexed each of the $docs documents");
cmp_ok($indexed // 1e9, '<', $docs + 1000, "and resumed where it was, not from the start ($indexed index operations)");

# 4. Failures while the ranges ship, through a proxy: bulks whose items
# OpenSearch refuses for now (429), then connections reset mid-answer.
# The cursor stays before every range not done with, so no key is passed
# over, and no id is ever in two bulks in flight.
my $proxy = FaultProxy->start($os);
my $proxied = $proxy->url;
$node->safe_psql('shop', qq{ALTER SERVER search OPTIONS (SET url '$proxied', SET bulk_max_documents '100')});
$proxy->fault('item429');
$node->safe_psql('shop', q{SELECT flusso_resnapshot('items')});
$node->poll_query_until('shop', q{SELECT ranges_after[1]::int > 1000
		FROM flusso.opensearch_generation WHERE index_name = 'items' AND state IN ('seeding', 'seeded')})
  or die 'the ranges do not move through the proxy';
$proxy->fault('reset');
for (1 .. 300)
{
	last if $proxy->answered('reset') >= 3;
	usleep(100_000);
}
$proxy->fault('pass');
ok(OpenSearchNode::caught_up($node, 'shop', 'items'), 'through the failures, the generation serves');
is_deeply($os->differences($node, 'shop', 'items', 't-items', ids_of('items')), [],
	'every document equals flusso_build()');
is($proxy->stats->{id_overlaps}, 0, 'no id was in two bulks in flight');
$proxy->stop;

# 5. A database whose flusso objects are 0.5.0 seeds by the queue with this
# library, and keeps doing so for the generation being seeded when ALTER
# EXTENSION UPDATE adds the ranges columns mid-seed; the next seed goes by
# ranges.
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql(
	'old', qq{
	CREATE EXTENSION flusso VERSION '0.5.0';
	CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL);
	INSERT INTO items SELECT i, 'item ' || i FROM generate_series(1, 3000) i;
	CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
		OPTIONS (url '$url', index_prefix 'o-', bulk_max_documents '10');
	SELECT flusso_create_index('items', \$\$
version: 1
table: items
primary_key: id
fields:
  - keyword: name
    required: true
\$\$);
	SELECT count(*) FROM flusso_provision()});
$node->poll_query_until('old', q{SELECT phase = 'live' FROM flusso_status()})
  or die 'the old index is not live';

# OpenSearchNode::caught_up() for a second database (a second slot)
sub old_caught_up
{
	my $lsn = $node->safe_psql('old', 'SELECT pg_current_wal_insert_lsn()');
	return $node->poll_query_until(
		'old', qq{SELECT (SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots
		  WHERE database = current_database() AND slot_name LIKE 'flusso_%')
		  AND (SELECT phase = 'live' AND ship_pending = 0 FROM flusso_status())
		  AND (SELECT bool_and(state = 'served') FROM flusso.opensearch_generation)});
}
$node->safe_psql('old', q{SELECT flusso_set_sinks('items', ARRAY['search'], '{"replicas": 0}')});
$node->poll_query_until('old', q{SELECT ship_pending BETWEEN 1 AND 2900 FROM flusso_status()})
  or die 'the old seed does not queue';
$node->safe_psql('old', 'ALTER EXTENSION flusso UPDATE');
$node->safe_psql('old', q{UPDATE items SET name = name || ' updated' WHERE id % 100 = 0});
$node->safe_psql('old', q{ALTER SERVER search OPTIONS (SET bulk_max_documents '1000')});
ok(old_caught_up(), 'updated mid-seed, the queued seed completes');
is($node->safe_psql('old', q{SELECT ranges_version IS NULL FROM flusso.opensearch_generation}), 't',
	'that generation was seeded by the queue');
is_deeply($os->differences($node, 'old', 'items', 'o-items', 'SELECT id::text FROM items'), [],
	'every document equals flusso_build()');
my $old_queued = OpenSearchNode::ship_counters($node, 'old', 'items')->{queued};
$node->safe_psql('old', q{SELECT flusso_resnapshot('items')});
ok(old_caught_up(), 'seeded again');
is($node->safe_psql('old', q{SELECT ranges_done FROM flusso.opensearch_generation}), 't',
	'by ranges, once updated');
is(OpenSearchNode::ship_counters($node, 'old', 'items')->{queued}, $old_queued, 'queueing nothing');
is_deeply($os->differences($node, 'old', 'items', 'o-items', 'SELECT id::text FROM items'), [],
	'every document equals flusso_build()');

done_testing();

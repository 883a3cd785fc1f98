# Commit -> visible without waiting out a timer.  With flusso.naptime at
# 10 s, a change committed right after the worker applied one is in the
# table sink within 3 s (the worker looks again soon after WAL arrived,
# and less often while none does); then, with the default naptime, twelve
# changes in a row reach OpenSearch (realtime GET) in under 6 s in all (the
# worker wakes the shipper when it commits documents to ship, rather than
# the shipper finding them at its next one-second poll).

use strict;
use warnings;

use Time::HiRes qw(time usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available();

my $node = flusso_node('wake');
$node->safe_psql('postgres', q{
	CREATE EXTENSION flusso;
	CREATE TABLE items (id int PRIMARY KEY, n int NOT NULL);
	INSERT INTO items VALUES (1, 0), (2, 0);
});
$node->safe_psql('postgres', q{SELECT flusso_create_index('items', $$
version: 1
table: items
primary_key: id
fields:
  - integer: n
    required: true
$$)});
$node->safe_psql('postgres', 'SELECT count(*) FROM flusso_provision()');
ok($node->poll_query_until('postgres', q{SELECT phase = 'live' FROM flusso_status()}),
	'the index is live');

# Seconds from now until $check returns true, polled every 10 ms; undef
# after 60 s.
sub seconds_until
{
	my ($check) = @_;
	my $start = time;
	while (time - $start < 60)
	{
		return time - $start if $check->();
		usleep(10_000);
	}
	return undef;
}

sub table_has
{
	my ($id, $n) = @_;
	return $node->safe_psql('postgres',
		"SELECT doc->>'n' FROM flusso_docs.items WHERE id = '$id'") eq $n;
}

# 1. The worker: naptime 10 s, two changes one after the other.
$node->safe_psql('postgres', q{ALTER SYSTEM SET flusso.naptime = '10s'; SELECT pg_reload_conf()});
ok($node->poll_query_until('postgres', q{SELECT current_setting('flusso.naptime') = '10s'}),
	'flusso.naptime is 10 s');
$node->safe_psql('postgres', 'UPDATE items SET n = 1 WHERE id = 1');
ok(defined seconds_until(sub { table_has(1, 1) }), 'the first change is in the table sink');
$node->safe_psql('postgres', 'UPDATE items SET n = 1 WHERE id = 2');
my $second = seconds_until(sub { table_has(2, 1) });
ok(defined $second && $second < 3,
	sprintf('a change right after one the worker applied is visible in %.2f s (< 3 s; naptime 10 s)',
		$second // -1));

# 2. The shipper: the default naptime, both sinks.
$node->safe_psql('postgres', q{ALTER SYSTEM RESET flusso.naptime; SELECT pg_reload_conf()});
ok($node->poll_query_until('postgres', q{SELECT current_setting('flusso.naptime') = '100ms'}),
	'flusso.naptime is back to 100 ms');
my $os = OpenSearchNode->start('wake');
my $url = $os->url;
$node->safe_psql('postgres', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$url', index_prefix 't-')});
$node->safe_psql('postgres',
	q{SELECT flusso_set_sinks('items', ARRAY['table', 'search'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'postgres', 'items'), 'the index is seeded into OpenSearch');

sub opensearch_has
{
	my ($id, $n) = @_;
	my ($status, $doc) = $os->request('GET', "/t-items/_doc/$id?realtime=true");
	return $status == 200 && $doc->{found} && $doc->{_source}{n} == $n;
}

my $total = 0;
my @each;
for my $n (2 .. 13)
{
	$node->safe_psql('postgres', "UPDATE items SET n = $n WHERE id = 1");
	my $took = seconds_until(sub { opensearch_has(1, $n) });
	if (!defined $took)
	{
		$total = undef;
		last;
	}
	push @each, sprintf('%.0f', $took * 1000);
	$total += $took;
}
note('commit -> visible by realtime GET, ms: ' . join(' ', @each));
ok(defined $total && $total < 6,
	sprintf('12 changes in a row each reach OpenSearch, in %.2f s in all (< 6 s)', $total // -1));
ok(table_has(1, 13) && opensearch_has(1, 13), 'both sinks hold the last change');
is($node->safe_psql('postgres', q{SELECT count(*) FROM flusso_verify('items')}), '0',
	'flusso_verify() finds nothing wrong');

done_testing();

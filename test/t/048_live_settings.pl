# Live settings: replicas and refresh_interval changed by flusso_set_sinks()
# are put on the served OpenSearch index in place.  No seed, no new
# generation; a client counting the alias every 10 ms meanwhile always
# finds every document, and changes go on shipping.  A shipper that starts
# again puts them back on an index they were changed on by hand.  A change
# of shards still builds a new generation.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FlussoTest;
use OpenSearchNode;

my $os = OpenSearchNode->start('live_settings');
my $node = flusso_node('live_settings');
ok(streaming_library($node), 'the library streams');

my $url = $os->url;
$node->safe_psql('library', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$url', index_prefix 'ls-')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('books', ARRAY['table', 'search'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'books: seeded into OpenSearch');
my $concrete = $node->safe_psql('library', q{SELECT concrete FROM flusso.opensearch_generation WHERE index_name = 'books'});
my $expected = $node->safe_psql('library', q{SELECT count(*) FROM flusso_docs.books});

# "replicas refresh_interval" of the served index, as the cluster says
sub settings
{
	my ($status, $body) = $os->request('GET', "/$concrete/_settings");
	return "HTTP $status" if $status != 200;
	my $index = $body->{$concrete}{settings}{index};
	return "$index->{number_of_replicas} " . ($index->{refresh_interval} // 'unset');
}
is(settings(), '0 1s', 'the served index has the options it was seeded with');

# what a change leaves behind: the generation, the seed row, the worker's seeds
sub seeds_logged
{
	return scalar(() = slurp_file($node->logfile) =~ /flusso: seeding index "books"/g);
}
my $seeds = seeds_logged();

# Change both while a client counts the alias: the settings arrive, every
# count is the table's, and nothing is seeded.
$node->safe_psql('library', q{SELECT flusso_set_sinks('books', ARRAY['table', 'search'],
	'{"replicas": 1, "refresh_interval": "30s"}')});
my ($polls, $bad, $now) = (0, 0, '');
my $deadline = time + 60;
while (time < $deadline)
{
	my ($status, $body) = $os->request('GET', '/ls-books/_count');
	$polls++;
	$bad++ if $status != 200 || $body->{count} != $expected;
	$now = settings();
	last if $now eq '1 30s';
	usleep(10_000);
}
is($now, '1 30s', 'replicas and refresh_interval are put on the served index');
is($bad, 0, "no count of the alias failed or differed from the documents table ($polls counts)");
is($node->safe_psql('library', q{SELECT string_agg(concrete || ' ' || state, ', ')
	FROM flusso.opensearch_generation WHERE index_name = 'books'}),
	"$concrete served", 'the same generation serves, and no other was begun');
is($node->safe_psql('library', q{SELECT needs_seed FROM flusso.index WHERE name = 'books'}), 'f',
	'the index is not to be seeded');
is($node->safe_psql('library', q{SELECT settings->>'replicas' || ' ' || (settings->>'refresh_interval')
	FROM flusso.opensearch_generation WHERE index_name = 'books'}), '1 30s', 'the generation records them');

# changes go on shipping (with a 30 s refresh: compared by realtime reads)
$node->safe_psql('library', q{UPDATE books SET pages = 4321 WHERE id = (SELECT min(id) FROM books WHERE NOT withdrawn)});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'a change after them is shipped');
my $id = $node->safe_psql('library', q{SELECT min(id) FROM books WHERE NOT withdrawn});
my (undef, $doc) = $os->request('GET', "/ls-books/_doc/$id?realtime=true");
is($doc->{_source}{pages}, 4321, 'the served index has it');
is(seeds_logged(), $seeds, 'the worker seeded nothing');
like(slurp_file($node->logfile), qr/flusso: OpenSearch index "\Q$concrete\E" of index "books" now has /,
	'the shipper logged the change');

# taken off by hand, they are put back once the shipper starts again
my ($status) = $os->request('PUT', "/$concrete/_settings", '{"index": {"number_of_replicas": 0}}');
is($status, 200, 'replicas set to 0 by hand');
is(settings(), '0 30s', 'the cluster has it');
$node->restart;
ok(poll_until(sub { settings() eq '1 30s' }), 'a shipper that starts again puts the options back');
is(seeds_logged(), $seeds, 'still without a seed');

# a change of shards builds another index: a new generation, seeded
$node->safe_psql('library', q{SELECT flusso_set_sinks('books', ARRAY['table', 'search'],
	'{"shards": 2, "replicas": 0, "refresh_interval": "1s"}')});
ok($node->poll_query_until('library', qq{SELECT EXISTS (SELECT FROM flusso.opensearch_generation
	WHERE index_name = 'books' AND concrete <> '$concrete' AND state = 'served')}), 'a new generation serves');
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'shards changed: caught up');
my $next = $node->safe_psql('library', q{SELECT concrete FROM flusso.opensearch_generation WHERE index_name = 'books'});
isnt($next, $concrete, 'the old one is gone');
my (undef, $body) = $os->request('GET', "/$next/_settings");
is($body->{$next}{settings}{index}{number_of_shards}, '2', 'with 2 shards');
is($os->count('ls-books'), $expected, 'and every document');

$node->stop;
done_testing();

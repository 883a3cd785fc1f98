# A server whose url names a node of its cluster and a node of another
# one (two embedded nodes, each a cluster of its own).  Before anything is
# sent, each node is asked which cluster it belongs to (GET /): the
# stranger is set aside, so no bulk, digest or alias check ever counts
# what it answers.  flusso_check() names it, with both clusters, as an
# error; flusso_status() says so in ship_error.  Every document reaches
# the real cluster, the stranger holds none of flusso's indexes, and each
# of 20 flusso_wait() calls that says true is borne out by a realtime GET
# on the real cluster.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available();

my $real = OpenSearchNode->start('real');
my $stranger = OpenSearchNode->start('stranger');
my (undef, $real_root) = $real->request('GET', '/');
my (undef, $stranger_root) = $stranger->request('GET', '/');
my ($real_uuid, $stranger_uuid) = ($real_root->{cluster_uuid}, $stranger_root->{cluster_uuid});
isnt($real_uuid, $stranger_uuid, 'the two nodes are two clusters');

my $node = flusso_node('one_cluster');
ok(streaming_library($node), 'the library streams');
my $urls = join(', ', $real->url, $stranger->url);
$node->safe_psql('library', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$urls', index_prefix 'u-', connect_timeout '2', request_timeout '10')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('books', ARRAY['table', 'search'])});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'books: seeded');
my $books_ids = 'SELECT id::text FROM books';
is_deeply($real->differences($node, 'library', 'books', 'u-books', $books_ids), [],
	'every document is in the real cluster');
is_deeply($stranger->indexes_like('u-'), [], 'the stranger holds none of flusso\'s indexes');

my $stranger_url = $stranger->url;
is( $node->safe_psql('library', q{SELECT severity || ': ' || message FROM flusso_check()
		WHERE path = 'sinks.opensearch' AND message LIKE '%belongs to cluster%'}),
	qq{error: node $stranger_url of OpenSearch server "search" belongs to cluster "flusso-test" ($stranger_uuid), not to cluster "flusso-test" ($real_uuid) of its other nodes: it is set aside, and nothing it answers counts},
	'flusso_check() names the stranger, and both clusters, as an error');
is( $node->safe_psql('library', q{SELECT message FROM flusso_check()
		WHERE path = 'sinks.opensearch' AND message LIKE '% nodes of OpenSearch server%'}),
	qq{1 of the 2 nodes of OpenSearch server "search" answer; its cluster is "flusso-test" ($real_uuid)},
	'and which cluster is the server\'s');

# 20 changes, each waited for: a wait that says true is borne out by the
# real cluster.
my ($waited, $borne_out) = (0, 0);
my @ids = split /\n/, $node->safe_psql('library', 'SELECT id FROM books WHERE NOT withdrawn ORDER BY id LIMIT 20');
for my $round (1 .. 20)
{
	my $id = $ids[ ($round - 1) % @ids ];
	my $pages = 7000 + $round;
	$node->safe_psql('library', "UPDATE books SET pages = $pages WHERE id = $id");
	next unless $node->safe_psql('library', q{SELECT flusso_wait('books', '10s')}) eq 't';
	$waited++;
	my ($status, $doc) = $real->request('GET', "/u-books/_doc/$id");
	$borne_out++ if $status == 200 && $doc->{_source}{pages} == $pages;
}
is($waited, 20, 'every wait says true');
is($borne_out, 20, 'and each is borne out by the real cluster');
is_deeply($stranger->indexes_like('u-'), [], 'the stranger still holds nothing');
ok( $node->poll_query_until('library', qq{SELECT ship_error LIKE
		'OpenSearch server "search": node $stranger_url belongs to cluster "flusso-test" ($stranger_uuid), not to the server''s cluster "flusso-test" ($real_uuid): set aside, nothing it answers counts'
		FROM flusso_status() WHERE index = 'books'}),
	'flusso_status() names the stranger in ship_error');
ok($node->log_contains(qr/node \Q$stranger_url\E of OpenSearch server "search" belongs to cluster "flusso-test" \(\Q$stranger_uuid\E\), not to the server's cluster/),
	'and so does the log');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('books')}), '0',
	'flusso_verify() finds every document right, asking the real cluster');

$node->stop;
done_testing();

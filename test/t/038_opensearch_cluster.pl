# A server that names several nodes of one cluster: three embedded nodes
# on loopback, the index with 3 shards and 1 replica.  A node SIGKILLed
# while a workload writes: shipping goes on through the others within
# seconds, flusso_check() says which node does not answer, and once the
# workload ends every document read through the alias equals a fresh
# build.  The node restarted joins again, and nothing changes: the
# documents stay right and later changes ship.

use strict;
use warnings;

use Time::HiRes qw(time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available();

my @nodes = OpenSearchNode->start_cluster('trio', 3);
my $urls = join(', ', map { $_->url } @nodes);
my $node = flusso_node('cluster');
ok(streaming_library($node), 'the library streams');
$node->safe_psql('library', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$urls', index_prefix 'c-', connect_timeout '2', request_timeout '10')});
$node->safe_psql('library',
	q{SELECT flusso_set_sinks('books', ARRAY['table', 'search'], '{"shards": 3, "replicas": 1}')});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'books: seeded into the cluster');
my $books_ids = 'SELECT id::text FROM books';
is_deeply($nodes[0]->differences($node, 'library', 'books', 'c-books', $books_ids), [],
	'every document is in the cluster');
like($node->safe_psql('library', q{SELECT message FROM flusso_check()
		WHERE path = 'sinks.opensearch' AND message LIKE '% nodes of OpenSearch server%'}),
	qr/^3 of the 3 nodes of OpenSearch server "search" answer; its cluster is "opensearch_trio" \(\S+\)$/, 'flusso_check(): every node answers, of one cluster');

# Every shard has its replica started before a node is killed: a shard
# whose only started copy is on that node would otherwise be lost with it
# (the cluster red, its _bulk items waiting for a primary).
my ($health_status, $health) = $nodes[0]->request('GET',
	'/_cluster/health?wait_for_status=green&wait_for_no_initializing_shards=true&timeout=60s');
is($health && $health->{status}, 'green', 'the cluster is green before the kill');

# A node killed while a workload writes.
srand(1038);
my ($workload, $err) = start_library_workload($node, 8000, 'cluster_workload');
my $shipped = $node->safe_psql('library', q{SELECT shipped FROM flusso_status() WHERE index = 'books'});
ok($node->poll_query_until('library', qq{SELECT shipped > $shipped FROM flusso_status() WHERE index = 'books'}),
	'documents ship while the workload writes');
my $killed = $nodes[1];
ok($workload->pumpable, 'the workload still writes');
$killed->kill9;
my $at = time;
$shipped = $node->safe_psql('library', q{SELECT shipped FROM flusso_status() WHERE index = 'books'});
ok($node->poll_query_until('library', qq{SELECT shipped > $shipped + 50 FROM flusso_status() WHERE index = 'books'}),
	'shipping goes on through the other nodes')
  or diag($nodes[0]->describe, $nodes[2]->describe);
my $took = time - $at;
cmp_ok($took, '<', 15, sprintf('within seconds of the kill (%.1f s)', $took));
$workload->finish;
is($$err, '', 'the workload ran without error');
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'caught up with a node down');
is_deeply($nodes[0]->differences($node, 'library', 'books', 'c-books', $books_ids), [],
	'every document read through the alias equals a fresh build');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('books')}), '0',
	'flusso_verify() agrees, for both sinks');
like($node->safe_psql('library', q{SELECT string_agg(message, E'\n' ORDER BY message) FROM flusso_check()
		WHERE path = 'sinks.opensearch' AND message LIKE '%node%'}),
	qr/^2 of the 3 nodes of OpenSearch server "search" answer; its cluster is "opensearch_trio" \(\S+\)\nnode \Q${\ $killed->url }\E of OpenSearch server "search" cannot be reached: .+$/,
	'flusso_check() says which node does not answer');
ok($node->log_contains(qr/node \Q${\ $killed->url }\E of OpenSearch server "search" does not answer/),
	'and so does the log');

# The node comes back: nothing changes.
$killed->restart;
ok( $node->poll_query_until('library', q{SELECT message LIKE '3 of the 3 nodes of OpenSearch server "search" answer; its cluster is "opensearch_trio" (%)'
		FROM flusso_check() WHERE path = 'sinks.opensearch' AND message LIKE '% nodes of OpenSearch server%'}),
	'the node answers again');
$node->safe_psql('library', q{UPDATE books SET pages = 4242 WHERE id = (SELECT min(id) FROM books WHERE NOT withdrawn)});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'a later change ships');
is_deeply($killed->differences($node, 'library', 'books', 'c-books', $books_ids), [],
	'read through the node that came back, every document is right');

$node->stop;
done_testing();

# Several _bulk requests of one index in flight at once (the server's
# bulks_in_flight), seen by a proxy in front of a real node that answers
# each after 0.2 s: a seed keeps exactly that many in flight; while four
# documents change again and again, no document is ever in two bulks in
# flight at once (its versions go in order), and OpenSearch ends equal to
# a fresh build; a seed without the delay, its bulks landing in any order,
# fails none; bulks_in_flight '1' sends one bulk at a time.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available('python3');

my $os = OpenSearchNode->start('flight');
my $proxy = FaultProxy->start($os);
my $proxy_port = $proxy->port;
my $node = flusso_node('flight');
ok(streaming_library($node), 'the library streams');
$node->safe_psql('library', q{INSERT INTO books (id, isbn, title)
	SELECT i, 'isbn-' || i, 'book ' || i FROM generate_series(100, 699) i});
ok(library_caught_up($node), 'the worker applied 600 new books');

my $books_ids = 'SELECT id::text FROM books';

# The SQL statements of $sql run by psql, one transaction each.
sub run_sql
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('library') ],
		'<', \$sql, '>', \$out, '2>', \$err);
	return $err;
}

$node->safe_psql('library', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url 'http://127.0.0.1:$proxy_port', index_prefix 'fl-',
	         bulk_max_documents '10', bulks_in_flight '3')});
$proxy->fault('slow 0.2');
$node->safe_psql('library', q{SELECT flusso_set_sinks('books', ARRAY['search'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'seed: 604 books shipped in bulks of 10');
my $stats = $proxy->stats;
is($stats->{bulks_max_in_flight}, 3, 'seed: three bulks were in flight at once, never more');
is($stats->{id_overlaps}, 0, 'seed: no document was in two bulks in flight');
is_deeply($os->differences($node, 'library', 'books', 'fl-books', $books_ids), [],
	'seed: every document equals a fresh build');

# 4 hot books, each changed 100 times over a few seconds, each change
# with a cold book
$proxy->fault('slow 0.2');
my @sql;
for my $i (0 .. 399)
{
	my $hot = 100 + $i % 4;
	my $cold = 200 + $i;
	push @sql, "BEGIN; UPDATE books SET title = 'hot $i' WHERE id = $hot;",
	  "UPDATE books SET pages = $i WHERE id = $cold; COMMIT;", 'SELECT pg_sleep(0.01);';
}
is(run_sql(join("\n", @sql)), '', 'hot: 400 transactions ran');
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'hot: every change shipped');
$stats = $proxy->stats;
cmp_ok($stats->{bulks_max_in_flight}, '<=', 3, 'hot: never more than three bulks in flight');
is($stats->{id_overlaps}, 0, 'hot: no document was in two bulks in flight');
is_deeply($os->differences($node, 'library', 'books', 'fl-books', $books_ids), [],
	'hot: every document equals a fresh build');
my (undef, $doc) = $os->request('GET', '/fl-books/_doc/103');
is($doc->{_source}{title}, 'hot 399', 'hot: the last version of a hot book is the one served');

# a seed again, the proxy passing at once: bulks land in any order, and
# each is read from its own response
$proxy->fault('pass');
my $served_sql = q{SELECT concrete FROM flusso.opensearch_generation
	WHERE index_name = 'books' AND state = 'served'};
my $first = $node->safe_psql('library', $served_sql);
$node->safe_psql('library', q{SELECT flusso_resnapshot('books')});
ok($node->poll_query_until('library', "SELECT ($served_sql) <> '$first'"),
	'again: a new generation is served');
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'again: seeded and served');
is($node->safe_psql('library', q{SELECT ship_error FROM flusso_status() WHERE index = 'books'}), '',
	'again: no bulk failed');
cmp_ok($proxy->stats->{bulks_max_in_flight}, '>=', 2, 'again: bulks were in flight together');
is_deeply($os->differences($node, 'library', 'books', 'fl-books', $books_ids), [],
	'again: every document equals a fresh build');

# one at a time
$node->safe_psql('library', q{ALTER SERVER search OPTIONS (SET bulks_in_flight '1')});
$proxy->fault('slow 0.2');
is(run_sql(join("\n", map { "UPDATE books SET pages = 1000 + $_ WHERE id = $_;" } 300 .. 399)), '',
	'one at a time: 100 transactions ran');
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'one at a time: every change shipped');
$stats = $proxy->stats;
is($stats->{bulks_max_in_flight}, 1, 'one at a time: a single bulk in flight');
is_deeply($os->differences($node, 'library', 'books', 'fl-books', $books_ids), [],
	'one at a time: every document equals a fresh build');

$proxy->fault('pass');
$node->stop;
$proxy->stop;
$os->stop;
done_testing();

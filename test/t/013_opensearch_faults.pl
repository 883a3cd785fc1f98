# Faults between flusso and OpenSearch, injected by a proxy in front of a
# real node (test/opensearch/fault_proxy.py): refused connections, resets
# mid-response, slow responses, 429 and 503 for whole requests, 429 for
# items of a bulk, and 413 for bulks too large.  Under each, a workload
# writes; once the proxy passes again, nothing is lost and nothing extra:
# every document equals a fresh build.  A hung cluster delays no one: a
# shipper waiting on it exits within 2 s of SIGTERM, and a backend
# waiting on it is cancelled as quickly.

use strict;
use warnings;

use Time::HiRes qw(usleep time);
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available('python3');

my $os = OpenSearchNode->start('faults');
my $proxy = FaultProxy->start($os);
my $proxy_port = $proxy->port;

sub fault { $proxy->fault(@_) }

# How many requests the proxy answered in a mode so far ("refuse" is
# counted once the proxy listens again).
sub answered
{
	my ($mode) = @_;
	fault('pass') if $mode eq 'refuse';
	return $proxy->answered($mode);
}

fault('pass');
my $node = flusso_node('faults');
ok(streaming_library($node), 'the library streams');
$node->safe_psql('library', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url 'http://127.0.0.1:$proxy_port', index_prefix 'f-', connect_timeout '1',
	         request_timeout '4', bulk_max_documents '50')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('books', ARRAY['table', 'search'], '{"replicas": 0}')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('authors', ARRAY['search'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'books: seeded through the proxy');
ok(OpenSearchNode::caught_up($node, 'library', 'authors'), 'authors: seeded through the proxy');

srand(1013);
for my $mode ('refuse', 'reset', 'slow 5', 'status 429', 'status 503', 'item429', 'toolarge 6000')
{
	my ($name) = split / /, $mode;
	my $since = $node->safe_psql('library', 'SELECT clock_timestamp()');
	fault($mode);
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('library') ],
		'<', \library_workload(300, '', 0), '>', \$out, '2>', \$err);
	is($err, '', "$mode: the workload ran");
	# let flusso meet the fault, and retry, for a while
	$node->poll_query_until('library', q{SELECT sum(shipped) > 0 FROM flusso_status()});
	sleep 4;
	my $met = answered($name);
	fault('pass');
	if ($name eq 'refuse')
	{
		# refused connections never reach the proxy: flusso says it met them
		like($node->safe_psql('library', qq{SELECT ship_error FROM flusso_status()
			WHERE ship_error_at > '$since' LIMIT 1}),
			qr/could not reach OpenSearch server "search".*Couldn't connect/, "$mode: flusso met it");
	}
	else
	{
		ok($met > 0, "$mode: the proxy answered $met requests so");
	}
	ok(OpenSearchNode::caught_up($node, 'library', 'books'), "$mode: books caught up once it passes");
	ok(OpenSearchNode::caught_up($node, 'library', 'authors'), "$mode: authors caught up");
	is_deeply($os->differences($node, 'library', 'books', 'f-books', 'SELECT id::text FROM books'), [],
		"$mode: every book equals flusso_build()");
	is_deeply($os->differences($node, 'library', 'authors', 'f-authors', 'SELECT id::text FROM authors'), [],
		"$mode: every author equals flusso_build()");
}
is($node->safe_psql('library', q{SELECT sum(rejected) FROM flusso_status()}), '0',
	'no document was rejected: every fault was retried');
like(slurp_file($proxy->log_file), qr/items rewritten/,
	'bulks answered with items refused for now were seen');

# A hung cluster: the shipper waits on a request that never ends, and
# still exits within 2 s of SIGTERM; the launcher starts it again.
fault('hang');
my $book = $node->safe_psql('library', q{SELECT min(id) FROM books WHERE NOT withdrawn});
$node->safe_psql('library', "UPDATE books SET pages = 7 WHERE id = $book");
ok($node->poll_query_until('library', q{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'flusso shipper'}),
	'a shipper runs');
my $waited = time;
usleep(200_000) while answered('hang') == 0 && time - $waited < 30;
ok(answered('hang') > 0, 'the shipper waits on a hung request');
my $pid = $node->safe_psql('library', q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso shipper'});
my $term = time;
kill 'TERM', $pid;
usleep(50_000) while kill(0, $pid) && time - $term < 10;
my $exit = time - $term;
ok(!kill(0, $pid), 'the shipper exited on SIGTERM');
cmp_ok($exit, '<', 2, sprintf('within 2 s (%.2f s)', $exit));

# A backend waiting on a hung cluster answers a cancel as quickly.
my ($check_out, $check_err) = ('', '');
my $check = IPC::Run::start(
	[ 'psql', '-X', '-d', $node->connstr('library'), '-c', 'SELECT count(*) FROM flusso_check()' ],
	'>', \$check_out, '2>', \$check_err);
ok($node->poll_query_until('library', q{SELECT count(*) = 1 FROM pg_stat_activity WHERE query LIKE '%FROM flusso_check()%' AND pid <> pg_backend_pid()}),
	'flusso_check() runs');
usleep(500_000);
my $cancel = time;
$node->safe_psql('library', q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%FROM flusso_check()%' AND pid <> pg_backend_pid()});
$check->finish;
my $cancelled = time - $cancel;
like($check_err, qr/canceling statement due to user request/, 'flusso_check() was cancelled');
cmp_ok($cancelled, '<', 2, sprintf('within 2 s (%.2f s)', $cancelled));

fault('pass');
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'once the cluster answers, the new shipper ships');
my (undef, $doc) = $os->request('GET', "/f-books/_doc/$book");
is($doc->{_source}{pages}, 7, 'the change made while it hung arrived');

$node->stop;
$proxy->stop;
done_testing();

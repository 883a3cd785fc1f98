# An OpenSearch outage never holds WAL: with the node killed for a minute
# under a steady write load, the worker keeps confirming its slot (the WAL
# the slot retains stays flat), what is to ship grows in the outbox, and
# once the node is back everything drains by itself: nothing pending,
# every document equal to a fresh build.

use strict;
use warnings;

use Time::HiRes qw(usleep time);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available();

my $os = OpenSearchNode->start('outage');
my $node = flusso_node('outage');
ok(streaming_library($node), 'the library streams');
my $url = $os->url;
$node->safe_psql('library', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$url', index_prefix 'o-', connect_timeout '1', request_timeout '5')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('books', ARRAY['table', 'search'], '{"replicas": 0}')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('authors', ARRAY['search'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'books: seeded into OpenSearch');
ok(OpenSearchNode::caught_up($node, 'library', 'authors'), 'authors: seeded into OpenSearch');

# A steady load: the library workload, a short sleep after each transaction.
srand(1012);
my $sql = library_workload(6000, '', 0);
$sql =~ s/COMMIT;/COMMIT;\nSELECT pg_sleep(0.035);/g;
my $file = "$PostgreSQL::Test::Utils::tmp_check/outage_workload.sql";
PostgreSQL::Test::Utils::append_to_file($file, $sql);
my ($out, $err) = ('', '');
my $load = IPC::Run::start(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('library'), '-f', $file ],
	'>', \$out, '2>', \$err);

sub retained
{
	return $node->safe_psql('library',
		q{SELECT pg_current_wal_lsn() - restart_lsn, pg_current_wal_lsn() - confirmed_flush_lsn,
		  confirmed_flush_lsn - '0/0' FROM pg_replication_slots WHERE slot_name LIKE 'flusso_%'});
}

sub pending
{
	return $node->safe_psql('library', q{SELECT sum(ship_pending) FROM flusso_status()});
}

sleep 3;
$os->kill9;
my $start = time;
my ($max_retained, $max_lag, $first_confirmed, $last_confirmed) = (0, 0, undef, undef);
my $pending_early;
while (time - $start < 60)
{
	my ($retained, $lag, $confirmed) = split /\|/, retained();
	$max_retained = $retained if $retained > $max_retained;
	$max_lag = $lag if $lag > $max_lag;
	$first_confirmed //= $confirmed;
	$last_confirmed = $confirmed;
	$pending_early //= pending() if time - $start > 5;
	$load->pump_nb;
	sleep 1;
}
my $pending_late = pending();
ok($load->pumpable, 'the load wrote throughout the outage');
ok($last_confirmed > $first_confirmed, 'the worker kept confirming its slot during the outage');
cmp_ok($max_lag, '<', 16 * 1024 * 1024, "the slot never lagged 16 MB behind (at most $max_lag bytes)");
cmp_ok($max_retained, '<', 64 * 1024 * 1024, "the WAL the slot retains stayed flat (at most $max_retained bytes)");
cmp_ok($pending_late, '>', $pending_early, "what is to ship grew in the outbox ($pending_early, then $pending_late)");
like($node->safe_psql('library', q{SELECT ship_error FROM flusso_status() WHERE index = 'books'}),
	qr/could not reach OpenSearch server "search"/, 'flusso_status() says why nothing ships');
cmp_ok($node->safe_psql('library', q{SELECT ship_oldest_seconds FROM flusso_status() WHERE index = 'books'}),
	'>', 30, 'and how old the oldest pending document is');
is($node->safe_psql('library', q{SELECT phase FROM flusso_status() WHERE index = 'books'}), 'live',
	'the index stays live: the table sink is kept up to date');

$os->restart;
$load->finish;
is($err, '', 'the load ran without error');
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'books: drained once the node is back');
ok(OpenSearchNode::caught_up($node, 'library', 'authors'), 'authors: drained');
is(pending(), '0', 'nothing is pending');
is_deeply($os->differences($node, 'library', 'books', 'o-books', 'SELECT id::text FROM books'), [],
	'books: every document equals flusso_build()');
is_deeply($os->differences($node, 'library', 'authors', 'o-authors', 'SELECT id::text FROM authors'), [],
	'authors: every document equals flusso_build()');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('books')})
	  + $node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('authors')}),
	0, 'flusso_verify() is clean for both sinks');

$node->stop;
done_testing();

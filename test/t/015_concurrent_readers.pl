# Readers never cost the worker a row.  The worker holds a logical
# decoding context, and PostgreSQL leaves a process so flagged out of other
# backends' snapshots: a reader that scanned rows of the worker's running
# transaction would take it for an aborted one and mark those rows invalid
# for good.  The shipper reads the outbox while the seed's chunks are
# written to it, and a client scans the documents table and the seed's new
# table without pause: afterwards every document is in OpenSearch and in
# the table, equal to a fresh build, and no catalog row of the seed (the
# new table, its indexes) went missing.  (Before the worker's own
# transactions ran without the flag, a quarter of the documents shipped
# here went missing.)

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available();

my $rows = 40000;
my $os = OpenSearchNode->start('readers');
my $node = flusso_node('readers');
$node->safe_psql('postgres', 'CREATE DATABASE readers');
my $url = $os->url;
$node->safe_psql('readers', qq{
	CREATE EXTENSION flusso;
	CREATE TABLE things (id int PRIMARY KEY, label text NOT NULL);
	INSERT INTO things SELECT g, 'thing ' || g FROM generate_series(1, $rows) g;
	CREATE TABLE noise (n int);
	CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch OPTIONS (url '$url', index_prefix 'r-');
});

# a client that scans the documents table and the seed's new one as fast
# as it can, committing small writes elsewhere in between
my $file = "$PostgreSQL::Test::Utils::tmp_check/reader.sql";
PostgreSQL::Test::Utils::append_to_file($file,
	"\\set ON_ERROR_STOP 0\n"
	  . ("SELECT count(*) FROM flusso_seed.things;\nINSERT INTO noise VALUES (1);\n"
		  . "SELECT count(*) FROM flusso_docs.things;\nINSERT INTO noise VALUES (2);\n") x 20000);
my ($out, $err) = ('', '');
my $reader = IPC::Run::start([ 'psql', '-X', '-q', '-d', $node->connstr('readers'), '-f', $file ],
	'>', \$out, '2>', \$err);

$node->safe_psql('readers', q{SELECT flusso_create_index('things', $$
version: 1
table: things
primary_key: id
fields:
  - integer: id
    required: true
  - text: label
    required: true
$$)});
$node->safe_psql('readers', 'SELECT count(*) FROM flusso_provision()');
ok( $node->poll_query_until('readers', q{SELECT phase = 'live' FROM flusso_status()}),
	'the table sink is seeded while a client reads');
is($node->safe_psql('readers', 'SELECT count(*) FROM flusso_docs.things'), $rows,
	'every document was seeded into the table');

# the OpenSearch sink: the shipper reads the root keys while the seed runs
$node->safe_psql('readers', q{SELECT flusso_set_sinks('things', ARRAY['table', 'search'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'readers', 'things'), 'seeded into OpenSearch');
is($os->count('r-things'), $rows, 'every document was shipped');

for my $round (1 .. 3)
{
	$node->safe_psql('readers', "UPDATE things SET label = 'round $round ' || id WHERE id % 7 = $round");
}
ok(OpenSearchNode::caught_up($node, 'readers', 'things'), 'updates are applied and shipped while it reads');
ok($reader->pumpable, 'the client was still reading');
$reader->kill_kill;

is($node->safe_psql('readers', 'SELECT count(*) FROM flusso_docs.things'), $rows,
	'every document is in the table');
is($os->count('r-things'), $rows, 'and in OpenSearch');
is($node->safe_psql('readers', q{SELECT count(*) FROM flusso_verify('things')}), '0',
	'both equal a fresh build');
is($node->safe_psql('readers', q{SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
	WHERE c.oid = 'flusso_docs.things'::regclass}), '3', 'the seeded table has its three indexes');
unlike(slurp_file($node->logfile), qr/cache lookup failed|deleted while still in use/,
	'no catalog row of the seed went missing');

$node->stop;
done_testing();

# Metrics where operators look: flusso_stat has one row per index and
# sink; eta_seconds is 0 while caught up, NULL while the worker makes no
# progress, and positive while it catches up on a backlog or seeds; a
# member of pg_monitor reads the figures but no error text; and every
# query of the postgres_exporter file (test/postgres_exporter/queries.yaml)
# runs as such a member, each column described with a fitting usage, and
# the real exporter publishes them.

use strict;
use warnings;

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FlussoTest;

my $node = flusso_node('metrics');
ok(streaming_library($node), 'the library indexes are defined and the worker streams');
ok(library_caught_up($node), 'and seeded');
$node->safe_psql('library', q{CREATE ROLE flusso_exporter LOGIN IN ROLE pg_monitor});

sub sinks
{
	return $node->safe_psql('library',
		q{SELECT string_agg(index || ':' || sink || ':' || coalesce(server_name, '-'), ' '
		  ORDER BY index, sink) FROM flusso_stat});
}

is(sinks(), 'authors:table:- books:table:-', 'an index without sinks recorded has the table sink');
is( $node->safe_psql('library',
		q{SELECT bool_and(datname = current_database() AND pending = 0 AND shipped = 0 AND rejected = 0)
		  FROM flusso_stat}),
	't', 'the table sink has nothing pending, shipped or rejected');
ok( $node->poll_query_until(
		'library', q{SELECT bool_and(eta_seconds = 0) FROM flusso_stat}),
	'caught up: eta_seconds is 0');
is($node->safe_psql('library', q{SELECT bool_and(eta_seconds = 0) FROM flusso_status()}),
	't', 'in flusso_status() too');

# A backlog: the worker waits for a lock on the books documents while
# 200 transactions of 500 new books commit, then applies them 500 changes
# a batch.
$node->safe_psql('library',
	q{ALTER SYSTEM SET flusso.batch_size = 500; SELECT pg_reload_conf()});
my $locker = $node->background_psql('library');
$locker->query_safe('BEGIN');
$locker->query_safe('LOCK TABLE flusso_docs.books IN SHARE MODE');
my $load = join("\n",
	map { my $from = 1000 + $_ * 500; my $to = $from + 499;
		"INSERT INTO books (id, isbn, title) SELECT g, 'isbn-' || g, 'Book ' || g FROM generate_series($from, $to) g;" }
	  (0 .. 199));
$node->safe_psql('library', $load);
ok( $node->poll_query_until(
		'library', q{SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE backend_type = 'flusso worker' AND wait_event_type = 'Lock'}),
	'the worker waits for the lock');
ok( $node->poll_query_until(
		'library', q{SELECT eta_seconds IS NULL AND lag_bytes > 0 AND lag_seconds > 0
		  FROM flusso_stat WHERE index = 'books'}),
	'while it makes no progress, its lag shows and eta_seconds is NULL');
$locker->query_safe('COMMIT');
$locker->quit;
ok( $node->poll_query_until(
		'library', q{SELECT eta_seconds > 0 AND lag_bytes > 0 FROM flusso_stat WHERE index = 'books'}),
	'while it catches up, eta_seconds is positive');
ok(library_caught_up($node), 'it catches up');
ok( $node->poll_query_until(
		'library', q{SELECT bool_and(eta_seconds = 0) FROM flusso_stat}),
	'and eta_seconds is 0 again');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_docs.books}),
	'100004', 'every new book has its document');

# A seed of the 100004 books, 2000 at a time.
$node->safe_psql('library',
	q{ALTER SYSTEM SET flusso.snapshot_chunk_size = 2000; SELECT pg_reload_conf()});
$node->safe_psql('library', q{SELECT flusso_resnapshot('books')});
ok( $node->poll_query_until(
		'library', q{SELECT phase = 'snapshot' AND eta_seconds > 0 AND snapshot_done < snapshot_total
		  FROM flusso_status() WHERE index = 'books'}),
	'while an index seeds, eta_seconds is positive');
ok( $node->poll_query_until(
		'library', q{SELECT phase = 'live' AND eta_seconds = 0 FROM flusso_stat WHERE index = 'books'}),
	'once seeded, it is 0');

# An OpenSearch sink: a row of its own, beside the table sink or alone.
# The server does not answer: its documents stay pending (those of the
# seed by ranges, from the root table's estimated rows), with no rate to
# estimate from, once the worker has seeded.
$node->safe_psql('library', q{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url 'http://127.0.0.1:1')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('authors', ARRAY['table', 'search'])});
is(sinks(), 'authors:opensearch:search authors:table:- books:table:-',
	'an index with the table and an OpenSearch sink has a row for each');
ok( $node->poll_query_until(
		'library', q{SELECT phase = 'live' AND pending > 0 AND last_error IS NOT NULL AND eta_seconds IS NULL
		  FROM flusso_stat WHERE index = 'authors' AND sink = 'opensearch'}),
	'documents pending for an unreachable server: its error, and no estimate');
is( $node->safe_psql('library',
		q{SELECT ship_pending > 0 AND ship_eta_seconds IS NULL AND eta_seconds = 0
		  FROM flusso_status() WHERE index = 'authors'}),
	't', 'flusso_status(): the stream is caught up, the shipping has no estimate');
is( $node->safe_psql('library',
		q{SELECT pending = 0 AND last_error IS NULL AND eta_seconds = 0
		  FROM flusso_stat WHERE index = 'authors' AND sink = 'table'}),
	't', 'and its table sink is caught up');
$node->safe_psql('library', q{SELECT flusso_set_sinks('authors', ARRAY['search'])});
is(sinks(), 'authors:opensearch:search books:table:-', 'an OpenSearch sink alone: one row');

# An index in error: its text for flusso_admin, only its phase for
# pg_monitor.
$node->safe_psql('library',
	q{SELECT flusso_create_index('ghosts', E'version: 1\ntable: no_such_table\nfields: []')});
ok( $node->poll_query_until(
		'library', q{SELECT phase = 'error' AND last_error LIKE '%no_such_table%'
		  FROM flusso_stat WHERE index = 'ghosts'}),
	'an index in error shows why');
is( $node->safe_psql('library',
		q{SELECT string_agg(index || ':' || sink || ':' || phase, ' ' ORDER BY index, sink)
		  FROM flusso_stat WHERE index <> 'authors'},
		extra_params => [ '-U', 'flusso_exporter' ]),
	'books:table:live ghosts:table:error', 'a pg_monitor member reads the phases');
is( $node->safe_psql('library',
		q{SELECT count(*) FILTER (WHERE last_error IS NOT NULL) || ' of ' || count(*) || ', '
		  || bool_or(sink = 'opensearch' AND last_error_at IS NOT NULL)
		  FROM flusso_stat WHERE index = 'ghosts' OR sink = 'opensearch'},
		extra_params => [ '-U', 'flusso_exporter' ]),
	'0 of 2, true', 'and the times of errors, not their texts');
is( $node->safe_psql('library',
		q{SELECT count(*) FROM flusso_status() WHERE last_error IS NOT NULL OR ship_error IS NOT NULL},
		extra_params => [ '-U', 'flusso_exporter' ]),
	'0', 'nor in flusso_status()');
my ($rc, $out, $err) = $node->psql('library', 'SELECT * FROM flusso_indexes',
	extra_params => [ '-U', 'flusso_exporter' ]);
like($err, qr/permission denied for view flusso_indexes/, 'nor the definitions');

# The postgres_exporter queries, as the exporter would run them.
my $file = "$ENV{FLUSSO_TEST_DIR}/postgres_exporter/queries.yaml";
my $json = `python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)' '$file'`;
is($?, 0, 'the exporter queries file is YAML');
my $queries = decode_json($json);
my %types = (
	LABEL => qr/^(text|name|character varying)$/,
	GAUGE => qr/^(bigint|integer|smallint|double precision|real|numeric)$/,
	COUNTER => qr/^(bigint|integer|smallint|double precision|real|numeric)$/);
my $rows = $node->safe_psql('library', 'SELECT count(*) FROM flusso_stat');
for my $name (sort keys %$queries)
{
	my $query = $queries->{$name}{query};
	my %described;
	for my $metric (@{ $queries->{$name}{metrics} })
	{
		my ($column, $spec) = %$metric;
		$described{$column} = $spec;
	}
	my @columns = split /\n/,
	  $node->safe_psql('library',
		"CREATE TEMP VIEW q AS $query;
		 SELECT attname || ':' || format_type(atttypid, atttypmod) FROM pg_attribute
		 WHERE attrelid = 'q'::regclass AND attnum > 0 ORDER BY attnum",
		extra_params => [ '-U', 'flusso_exporter' ]);
	ok(@columns > 0, "$name runs as a pg_monitor member");
	my %returned;
	for (@columns)
	{
		my ($column, $type) = split /:/;
		$returned{$column} = 1;
		my $spec = $described{$column};
		ok($spec, "$name: column $column is described") or next;
		ok($types{ $spec->{usage} // '' }, "$name: $column has a known usage")
		  or next;
		like($type, $types{ $spec->{usage} }, "$name: $column ($spec->{usage}) is $type");
		ok(length($spec->{description} // ''), "$name: $column has a description");
	}
	is_deeply([ grep { !$returned{$_} } sort keys %described ], [],
		"$name: every metric described is a column of the query");
	is( $node->safe_psql('library', "SELECT count(*) FROM ($query) q",
			extra_params => [ '-U', 'flusso_exporter' ]),
		$rows, "$name: one row per index and sink");
}

# The real exporter (Debian's prometheus-postgres-exporter, which
# test/deps.sh installs) scrapes the node with the file, as the pg_monitor
# member: one series per index and sink, typed as the file says.
my $exporter_bin = '/usr/bin/prometheus-postgres-exporter';
SKIP:
{
	if (!-x $exporter_bin)
	{
		# make test installs everything: there, a missing exporter fails
		BAIL_OUT("$exporter_bin is missing: run test/deps.sh") if $ENV{FLUSSO_REQUIRE_OPENSEARCH};
		skip "$exporter_bin is not installed", 7;
	}
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my ($eout, $eerr) = ('', '');
	local $ENV{DATA_SOURCE_NAME} = 'host=' . $node->host . ' port=' . $node->port
	  . ' dbname=library user=flusso_exporter sslmode=disable';
	my $exporter = IPC::Run::start(
		[ $exporter_bin, "--web.listen-address=127.0.0.1:$port", "--extend.query-path=$file",
		  '--disable-default-metrics', '--disable-settings-metrics' ],
		'>', \$eout, '2>', \$eerr);
	my $metrics = '';
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		$metrics = `curl -s http://127.0.0.1:$port/metrics`;
		last if $metrics =~ /^flusso_stat_lag_bytes\{/m;
		usleep(100_000);
	}
	my @rows = split /\n/, $node->safe_psql('library',
		q{SELECT index || ' ' || sink || ' ' || coalesce(server_name, '') || ' ' || phase
		  FROM flusso_stat ORDER BY 1});
	my @series = sort map { /index="([^"]*)",phase="([^"]*)",server="[^"]*",server_name="([^"]*)",sink="([^"]*)"/ ? "$1 $4 $3 $2" : () }
	  grep { /^flusso_stat_eta_seconds\{datname="library",/ } split /\n/, $metrics;
	is_deeply(\@series, \@rows, 'the exporter publishes one eta_seconds series per index and sink');
	for my $counter (qw(changes_captured documents_written batches shipped))
	{
		like($metrics, qr/^# TYPE flusso_stat_$counter counter$/m, "flusso_stat_$counter is a counter");
	}
	like($metrics, qr/^# TYPE flusso_stat_lag_bytes gauge$/m, 'flusso_stat_lag_bytes is a gauge');
	unlike($eerr, qr/Error running query/, 'the exporter ran the query without error');
	$exporter->kill_kill;
}

$node->stop;
done_testing();

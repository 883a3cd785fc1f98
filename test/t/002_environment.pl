# flusso_check() reports a server that is not set up for flusso, and
# flusso_provision() returns the exact statements that fix it: running them
# and restarting leaves no environment error.  The publication name comes
# from a setting and is quoted wherever it appears.  A worker that cannot
# run (every replication slot taken) puts its database's indexes in phase
# error, with the cause, in flusso_status().

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = PostgreSQL::Test::Cluster->new('misconfigured');
$node->init;
# output_plugin_libraries exists only in the minors released from
# 2026-08-13 on; an older server has nothing there to report or set.
my $has_plugin_list = server_has_setting('output_plugin_libraries');
$node->append_conf(
	'postgresql.conf', q{
wal_level = replica
shared_preload_libraries = ''
max_replication_slots = 0
max_worker_processes = 2
flusso.publication = 'Flusso "Pub"'
});
$node->append_conf('postgresql.conf',
	"output_plugin_libraries = 'pgoutput, test_decoding'\n")
  if $has_plugin_list;
$node->start;
load_library($node, 'library');
my $books = slurp_file(fixture_path('books.schema.yml'));
$node->safe_psql('library',
	"SELECT flusso_create_index('books', \$def\$$books\$def\$)");

my $environment = q{SELECT path || ': ' || message FROM flusso_check()
	WHERE index IS NULL AND severity = 'error' ORDER BY 1};
is( $node->safe_psql('library', $environment),
	join("\n",
		'max_replication_slots: max_replication_slots is 0, and flusso needs one slot per database',
		'max_worker_processes: max_worker_processes is 2, and flusso needs at least 3: a launcher, a worker per database and a probe',
		($has_plugin_list
			? ('output_plugin_libraries: flusso is not in output_plugin_libraries')
			: ()),
		'publication: publication "Flusso "Pub"" does not exist',
		'shared_preload_libraries: flusso is not in shared_preload_libraries',
		'wal_level: wal_level is "replica", and flusso needs "logical"'),
	'every environment problem is reported');

my $first = $node->safe_psql('library',
	q{SELECT action || ' | ' || coalesce(sql, '') || ' | ' || applied FROM flusso_provision()});
my @settings = sort grep { /^set / } split /\n/, $first;
is_deeply(
	\@settings,
	[
		($has_plugin_list
			? ("set output_plugin_libraries | ALTER SYSTEM SET output_plugin_libraries = 'pgoutput', 'test_decoding', 'flusso'; SELECT pg_reload_conf() | false")
			: ()),
		"set shared_preload_libraries | ALTER SYSTEM SET shared_preload_libraries = 'flusso' | false",
		"set wal_level | ALTER SYSTEM SET wal_level = logical | false"
	],
	'provision returns the settings to change, appending to the lists');
like($first, qr/^create publication Flusso "Pub" \| CREATE PUBLICATION "Flusso ""Pub""" WITH \(publish_via_partition_root = true\) \| true$/m,
	'the publication is created under its quoted name');
like($first,
	qr/^publish public.references \| ALTER PUBLICATION "Flusso ""Pub""" ADD TABLE public."references" \| true$/m,
	'tables are added with both names quoted');
is($node->safe_psql('library', q{SELECT pubname FROM pg_publication}),
	'Flusso "Pub"', 'the publication exists under the configured name');

# Without flusso preloaded there is no worker: its slot is reported missing,
# as a warning, and provisioning leaves the slot to the worker.
is( $node->safe_psql('library',
		q{SELECT path || ' ' || severity FROM flusso_check() WHERE path IN ('slot', 'worker') ORDER BY 1}),
	"slot warning\nworker warning", 'the missing slot and worker are warnings');
my $oid = $node->safe_psql('library', q{SELECT oid FROM pg_database WHERE datname = 'library'});
like($first, qr/^replication slot flusso_$oid \|  \| false$/m,
	'provision reports the slot as the worker\'s to create');

# Run what provision and check said, then restart.
for my $row (split /\n/, $node->safe_psql('library',
	q{SELECT sql FROM flusso_provision() WHERE action LIKE 'set %'}))
{
	$node->safe_psql('library', $_) for split /; /, $row;
}
for my $row (split /\n/, $node->safe_psql('library',
	q{SELECT hint FROM flusso_check() WHERE path IN ('max_replication_slots', 'max_worker_processes')}))
{
	$node->safe_psql('library', (split /; /, $row)[0]);
}
$node->restart;

is($node->safe_psql('library', 'SHOW shared_preload_libraries'),
	'flusso', 'shared_preload_libraries now loads flusso');
if ($has_plugin_list)
{
	is($node->safe_psql('library', 'SHOW output_plugin_libraries'),
		'pgoutput, test_decoding, flusso', 'output_plugin_libraries kept its entries');
}
else
{
	is($node->safe_psql('library',
			q{SELECT count(*) FROM pg_settings WHERE name = 'output_plugin_libraries'}),
		'0', 'a minor without output_plugin_libraries has nothing to set');
}
is($node->safe_psql('library', $environment),
	'', 'no environment error is left');
ok( $node->poll_query_until(
		'library', q{SELECT count(*) = 0 FROM flusso_check() WHERE index IS NULL}),
	'once the worker runs, the environment has nothing to report');
is( $node->safe_psql(
		'library', q{SELECT count(*) FROM flusso_provision() WHERE applied}),
	'0', 'provisioning again applies nothing');

# One replication slot, the library's: another database's worker finds
# none free, and flusso_status() says so, not only the server log.
$node->safe_psql('library', 'ALTER SYSTEM SET max_replication_slots = 1');
$node->restart;
ok(library_caught_up($node), 'the library streams, holding the one slot');
things_database($node, 'crowded');
ok( $node->poll_query_until(
		'crowded', q{SELECT phase = 'error' AND last_error LIKE '%all replication slots are in use%'
		FROM flusso_status()}),
	'a worker that finds no free slot puts its index in phase error, with the cause');
ok( $node->poll_query_until(
		'crowded', q{SELECT phase = 'error'
		AND last_error LIKE 'all replication slots are in use (the worker failed % times in a row; it starts again in % s)'
		FROM flusso_status()}),
	'and keeps the cause while the worker backs off');

done_testing();

# Upgrades: a database that runs the released 0.1.0 keeps streaming with the
# new library, and ALTER EXTENSION flusso UPDATE, run while a workload
# writes, brings it to the newest version without losing a change: every
# document equals a fresh build afterwards, the slot never moved backwards,
# and the upgraded objects are those of a fresh install.

use strict;
use warnings;

use Time::HiRes qw(usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('upgrade');
$node->safe_psql('postgres', 'CREATE DATABASE library');
$node->safe_psql('library', slurp_file(fixture_path('schema.sql')));
$node->safe_psql('library', slurp_file(fixture_path('seed.sql')));
$node->safe_psql('library', q{CREATE EXTENSION flusso VERSION '0.1.0'});
for my $index ('books', 'authors')
{
	my $definition = slurp_file(fixture_path("$index.schema.yml"));
	$node->safe_psql('library', "SELECT flusso_create_index('$index', \$def\$$definition\$def\$)");
}
$node->safe_psql('library', 'SELECT count(*) FROM flusso_provision()');
ok(library_caught_up($node), 'the 0.1.0 objects seed and stream with the new library');

# The update while a workload writes; the slot's position is sampled
# throughout and must never go back.
srand(20261201);
my ($workload, $err) = start_library_workload($node, 3000, 'upgrade_workload');
my @positions;
sub sample
{
	push @positions, $node->safe_psql('library',
		q{SELECT confirmed_flush_lsn - '0/0' FROM pg_replication_slots WHERE slot_name LIKE 'flusso_%'});
}
sample() for 1 .. 5;
$node->safe_psql('library', 'ALTER EXTENSION flusso UPDATE');
ok($workload->pumpable, 'the update ran while the workload wrote');
while ($workload->pumpable)
{
	sample();
	usleep(100_000);
	$workload->pump_nb;
}
$workload->finish;
is($$err, '', 'the workload ran without error');
ok(library_caught_up($node), 'the worker caught up after the update');
sample();
my @sorted = sort { $a <=> $b } @positions;
is_deeply(\@positions, \@sorted, 'the slot never moved backwards (' . scalar(@positions) . ' samples)');
is( $node->safe_psql('library',
		q{SELECT (SELECT count(*) FROM flusso_verify('books')) + (SELECT count(*) FROM flusso_verify('authors'))}),
	'0', 'no change was lost: every document equals a fresh build');

is($node->safe_psql('library', q{SELECT extversion FROM pg_extension WHERE extname = 'flusso'}),
	'0.3.0', 'the extension is at 0.3.0');
is( $node->safe_psql('library', q{SELECT count(*) FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid
		AND d.deptype = 'e' AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'flusso')
		WHERE p.proconfig IS DISTINCT FROM '{"search_path=pg_catalog, pg_temp"}'}),
	'0', 'every function pins search_path');
is($node->safe_psql('library', q{SELECT count(*) FROM pg_class
		WHERE relnamespace = 'flusso_docs'::regnamespace AND has_table_privilege('flusso_admin', oid, 'SELECT')}),
	'0', 'flusso_admin no longer reads every documents table');

# A fresh install at the newest version has the same objects.
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION flusso');
my $objects = q{SELECT string_agg(o, E'\n' ORDER BY o) FROM (
	SELECT pg_describe_object(classid, objid, 0)
		|| coalesce(' ' || (SELECT array_to_string(proconfig, ',') FROM pg_proc
							WHERE oid = objid AND classid = 'pg_proc'::regclass), '') AS o
	FROM pg_depend WHERE deptype = 'e'
	AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'flusso')) s};
is($node->safe_psql('library', $objects), $node->safe_psql('fresh', $objects),
	'a fresh install and an upgraded one have the same objects');

$node->stop;
done_testing();

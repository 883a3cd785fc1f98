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
my ($workload, $err) = start_library_workload($node, 20000, 'upgrade_workload');
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
	'0.11.0', 'the extension is at 0.11.0');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_upstream()}), '0',
	'flusso_upstream() on the upgraded database: no subscription');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('books', repair => true)}), '0',
	'flusso_verify() takes repair on the upgraded database');
# what 0.8.0 adds works on the upgraded database: a commit made after the
# workload is in the table sink when flusso_wait() returns
my $book = $node->safe_psql('library', q{SELECT min(id) FROM books WHERE NOT withdrawn});
$node->safe_psql('library', qq{UPDATE books SET title = 'Upgraded and waited for' WHERE id = $book});
is( $node->safe_psql('library', qq{SELECT flusso_wait('books', '60s');\n}
		. qq{SELECT doc->>'title' FROM flusso_docs.books WHERE id = '$book'}),
	"t\nUpgraded and waited for", 'flusso_wait() on the upgraded database returns once the commit is in the documents');
is( $node->safe_psql('library', q{SELECT count(*) FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid
		AND d.deptype = 'e' AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'flusso')
		WHERE p.proconfig IS DISTINCT FROM '{"search_path=pg_catalog, pg_temp"}'}),
	'0', 'every function pins search_path');
is($node->safe_psql('library', q{SELECT count(*) FROM pg_class
		WHERE relnamespace = 'flusso_docs'::regnamespace AND has_table_privilege('flusso_admin', oid, 'SELECT')}),
	'0', 'flusso_admin no longer reads every documents table');

# A fresh install at the newest version has the same objects, defined
# alike: functions with their bodies, settings and grants, tables with
# their columns, defaults, constraints, indexes and grants, schemas with
# their grants, and every comment.
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION flusso');
my $objects = q{
	WITH members AS (
		SELECT classid, objid FROM pg_depend
		WHERE deptype = 'e' AND refclassid = 'pg_extension'::regclass
		AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'flusso'))
	SELECT string_agg(d, E'\n' ORDER BY d) FROM (
		SELECT pg_describe_object(classid, objid, 0) || E'\n  ' || CASE classid
			WHEN 'pg_proc'::regclass THEN
				(SELECT pg_get_functiondef(p.oid) || ' acl ' || coalesce(p.proacl::text, '-')
				 FROM pg_proc p WHERE p.oid = objid)
			WHEN 'pg_class'::regclass THEN
				(SELECT c.relkind::text || ' acl ' || coalesce(c.relacl::text, '-')
					|| ' columns ' || coalesce((SELECT string_agg(a.attname || ' '
							|| format_type(a.atttypid, a.atttypmod)
							|| CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
							|| coalesce(' default ' || pg_get_expr(ad.adbin, ad.adrelid), '')
							|| coalesce(' acl ' || a.attacl::text, ''), ', ' ORDER BY a.attnum)
						FROM pg_attribute a LEFT JOIN pg_attrdef ad
							ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
						WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '-')
					|| ' constraints ' || coalesce((SELECT string_agg(pg_get_constraintdef(k.oid), ', '
							ORDER BY pg_get_constraintdef(k.oid))
						FROM pg_constraint k WHERE k.conrelid = c.oid), '-')
					|| ' indexes ' || coalesce((SELECT string_agg(pg_get_indexdef(i.indexrelid), ', '
							ORDER BY pg_get_indexdef(i.indexrelid))
						FROM pg_index i WHERE i.indrelid = c.oid), '-')
					|| CASE WHEN c.relkind = 'v' THEN ' view ' || pg_get_viewdef(c.oid) ELSE '' END
				 FROM pg_class c WHERE c.oid = objid)
			WHEN 'pg_namespace'::regclass THEN
				(SELECT 'acl ' || coalesce(n.nspacl::text, '-') FROM pg_namespace n WHERE n.oid = objid)
			ELSE '' END
			|| coalesce(E'\n  comment ' || obj_description(objid, (SELECT relname FROM pg_class WHERE oid = classid)), '')
			AS d
		FROM members) s};
my $upgraded = $node->safe_psql('library', $objects);
like($upgraded, qr/^function flusso_set_sinks\(.*\n  CREATE OR REPLACE FUNCTION public\.flusso_set_sinks/m,
	'the definitions compared include function bodies');
is($upgraded, $node->safe_psql('fresh', $objects),
	'a fresh install and an upgraded one have the same objects, defined alike');

$node->stop;
done_testing();

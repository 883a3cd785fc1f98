# Status for any number of indexes: 200 indexes of one database are each
# seeded and shown live, and a broken one that sorts after all of them
# shows phase error with its reason (before, status was kept for the first
# 64 indexes: the others showed idle forever, the broken one too).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('lots');
$node->safe_psql('postgres', 'CREATE DATABASE lots');
$node->safe_psql('lots', q{
	CREATE EXTENSION flusso;
	CREATE TABLE items (id int PRIMARY KEY, n int NOT NULL);
	INSERT INTO items SELECT i, i FROM generate_series(1, 3) i;
	DO $$
	BEGIN
		FOR i IN 1 .. 200 LOOP
			PERFORM flusso_create_index(pg_catalog.format('i%s', pg_catalog.lpad(i::text, 3, '0')),
				E'version: 1\ntable: items\nprimary_key: id\nfields:\n  - integer: n\n    required: true\n');
		END LOOP;
	END
	$$;
	SELECT flusso_create_index('zz_ghost', E'version: 1\ntable: no_such_table\nfields: []');
});
$node->safe_psql('lots', 'SELECT count(*) FROM flusso_provision()');

ok( $node->poll_query_until(
		'lots', q{SELECT count(*) FILTER (WHERE phase = 'live') = 200 FROM flusso_status()}),
	'all 200 indexes are seeded and live');
ok( $node->poll_query_until(
		'lots', q{SELECT phase = 'error' FROM flusso_status() WHERE index = 'zz_ghost'}),
	'the broken one, the 201st, is in phase error');
like($node->safe_psql('lots', q{SELECT last_error FROM flusso_status() WHERE index = 'zz_ghost'}),
	qr/no_such_table/, 'with its reason');
is( $node->safe_psql('lots',
		q{SELECT phase || ' ' || snapshot_done || ' ' || snapshot_total FROM flusso_status() WHERE index = 'i200'}),
	'live 3 3', 'the 200th index shows its seed');

$node->safe_psql('lots', 'UPDATE items SET n = n + 10');
ok( $node->poll_query_until(
		'lots', q{SELECT count(*) = 3 FROM flusso_docs.i200 WHERE (doc ->> 'n')::int > 10}),
	'and follows changes');

$node->stop;
done_testing();

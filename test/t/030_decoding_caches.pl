# Decoding must not leave the worker's caches in the past.  A row is
# committed, then VACUUM FULL rewrites its table into a new file; the
# worker takes in the rewrite's invalidation before it decodes the row,
# so decoding builds the table's relation entry as it was before the
# rewrite (the old file), and nothing invalidates that entry again until
# the reader reaches the rewrite's commit.  With a batch of one change the
# worker builds the row's document before it gets there: from stale
# caches it would read the old, emptied file and find no row.  The worker
# keeps its caches between batches only while the reader has passed every
# catalog change whose invalidation it took in (util/xact.c); here it must
# start from clean ones.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('caches');
$node->append_conf('postgresql.conf', q{
flusso.batch_size = 1
flusso.max_build_delay = 0
});
$node->restart;
things_database($node, 'shop');

ok(database_caught_up($node, 'shop'), 'seeded and live');

for my $round (1 .. 3)
{
	my $id = 100 + $round;

	# Stop the worker before it reads on: it looks at the catalog when DDL
	# may have changed it (a table made and dropped), and waits there for a
	# lock on flusso.index, inside a transaction of its own.
	my $lock = $node->background_psql('shop');
	$lock->query_safe('BEGIN; LOCK TABLE flusso.index IN ACCESS EXCLUSIVE MODE');
	$node->safe_psql('shop', "CREATE TABLE nudge_$round (); DROP TABLE nudge_$round; SELECT pg_reload_conf()");
	$node->poll_query_until('shop', q{SELECT count(*) = 1 FROM pg_stat_activity
		WHERE backend_type = 'flusso worker' AND wait_event_type = 'Lock'})
	  or die 'the worker does not wait for flusso.index';

	# a row, then a rewrite of its table into a new file, both committed
	# before the worker reads either
	$node->safe_psql('shop', "INSERT INTO things VALUES ($id, 'new $id')");
	$node->safe_psql('shop', 'VACUUM FULL things');
	$lock->query_safe('COMMIT');
	$lock->quit;

	ok(database_caught_up($node, 'shop'), "round $round: caught up");
	is( $node->safe_psql('shop',
			"SELECT doc->>'label' FROM flusso_docs.things WHERE id = '$id'"),
		"new $id", "round $round: the row committed before the rewrite has its document");
	is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_verify('things')}),
		'0', "round $round: every document equals a fresh build");
}

my $log = slurp_file($node->logfile);
unlike($log, qr/could not (read|open)/, 'no stale file was read');

done_testing();

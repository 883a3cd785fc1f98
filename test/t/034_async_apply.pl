# The worker commits what it applies without waiting for the WAL flush
# (synchronous_commit off), and confirms its slot past a change only once
# the commit that wrote the change's documents is flushed.  The WAL writer
# is held to one flush every 10 s, and a crash is injected right after the
# first confirmation saved once the worker has committed a document: had
# the worker confirmed before its commit reached disk, the crash (which
# loses the WAL buffers) would leave the slot past the change and the
# document lost.  After the restart the document is there, as built from
# the row, and the seed's watermarks still move at their own pace: the
# worker flushes them.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FlussoTest;

my $node = flusso_node('async_apply');
$node->append_conf('postgresql.conf', q{
synchronous_commit = on
wal_writer_delay = '10s'
wal_writer_flush_after = 0
autovacuum = off
restart_after_crash = on
flusso.slot_save_interval = 0
flusso.naptime = '50ms'
});
$node->restart;
things_database($node, 'shop');

ok(database_caught_up($node, 'shop'), 'seeded and live');
is($node->safe_psql('shop', 'SELECT count(*) FROM flusso_docs.things'), '50', '50 documents');

SKIP:
{
	skip 'flusso was built without FLUSSO_TEST_HOOKS', 7
	  unless has_test_hook($node, 'shop', 'flusso.test_crash_confirmed_file');
	my $crash_file = arm_crash_file($node, 'shop', 'flusso.test_crash_confirmed_file',
		'flusso_crash_confirmed');
	# the worker arms the hook on one of its next turns (every 50 ms or less)
	usleep(1_000_000);

	$node->safe_psql('shop', q{INSERT INTO things VALUES (51, 'written before the crash')});
	# the document is visible as soon as the worker commits, flushed or not;
	# then the crash, once the worker confirmed: the server restarts itself
	my $seen = 0;
	my $crashed = 0;
	for my $try (1 .. 600)
	{
		my $label = eval { $node->safe_psql('shop',
			q{SELECT doc->>'label' FROM flusso_docs.things WHERE id = '51'}) };
		$seen = 1 if defined $label && $label eq 'written before the crash';
		my $gone = eval { $node->safe_psql('shop', "SELECT pg_stat_file('$crash_file', true) IS NULL") };
		if (defined $gone && $gone eq 't')
		{
			$crashed = 1;
			last;
		}
		usleep(100_000);
	}
	ok($seen, 'the document was visible before the crash');
	ok($crashed, 'the injected crash happened once the worker confirmed past its commit');
	ok($node->log_contains('crash injected after a confirmation'), 'the server log names the crash');
	# the crash restarts every process: connect again once that is over
	my $reinitialized = 0;
	for (1 .. 600)
	{
		$reinitialized = $node->log_contains('all server processes terminated; reinitializing');
		last if $reinitialized;
		usleep(100_000);
	}
	ok($reinitialized && $node->poll_query_until('shop', 'SELECT NOT pg_is_in_recovery()'),
		'the server is back after the crash');
	$node->safe_psql('shop', 'ALTER SYSTEM RESET flusso.test_crash_confirmed_file');
	$node->reload;

	ok(database_caught_up($node, 'shop'), 'live again after the crash');
	is($node->safe_psql('shop', q{SELECT doc->>'label' FROM flusso_docs.things WHERE id = '51'}),
		'written before the crash', 'the document written before the crash is there');
	is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_docs.things}), '51', '51 documents');
	is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_verify('things')}), '0',
		'no document differs from a fresh build');
}

# Seeding afresh goes through its watermarks, which the stream reads once
# flushed: with the WAL writer flushing every 10 s, 10 chunks would take
# minutes unless the worker flushed them itself.
$node->safe_psql('shop', q{
ALTER SYSTEM SET flusso.snapshot_chunk_size = 10;
SELECT pg_reload_conf();
});
my $oid = $node->safe_psql('shop', q{SELECT 'flusso_docs.things'::regclass::oid});
my $started = time;
$node->safe_psql('shop', q{SELECT flusso_resnapshot('things')});
ok( $node->poll_query_until(
		'shop', qq{SELECT 'flusso_docs.things'::regclass::oid <> $oid
		  AND (SELECT phase = 'live' FROM flusso_status() WHERE index = 'things')}),
	'seeded again: a new documents table is in place');
cmp_ok(time - $started, '<', 30, 'a seed of 6 chunks takes less than 30 s');
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_verify('things')}), '0',
	'no document differs from a fresh build after the seed');

$node->stop;
done_testing();

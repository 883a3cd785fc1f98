# The launcher starts a worker without a restart; the worker creates its
# slot, captures changes, and confirms the slot only after applying them.
# SIGKILL and a crash between flush and confirm lose nothing; dropping the
# extension, the last index or the database leaves no slot; a slot dropped
# by hand is detected and recreated; a 1M-row transaction decodes in
# bounded memory.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FlussoTest;

my $node = flusso_node('worker');
$node->append_conf('postgresql.conf', "flusso.capture_log = on\nrestart_after_crash = on\n");
$node->reload;

my $index = q{version: 1
table: items
primary_key: id
fields:
  - integer: n
    required: true
};

sub setup_database
{
	my ($db) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, q{
		CREATE EXTENSION flusso;
		CREATE TABLE items (id int PRIMARY KEY, n int NOT NULL);
		CREATE TABLE unpublished (id int);
	});
	$node->safe_psql($db, "SELECT flusso_create_index('items', \$\$$index\$\$)");
	$node->safe_psql($db, 'SELECT count(*) FROM flusso_provision()');
}

sub wait_for_worker
{
	my ($db) = @_;
	ok( $node->poll_query_until(
			$db,
			q{SELECT count(*) = 1 FROM pg_stat_activity
			  WHERE backend_type = 'flusso worker' AND datname = current_database()
			  AND query = 'streaming'}),
		"a worker streams for $db");
}

# Poll across a crash restart: connection failures are retried, not fatal.
sub poll_through_crash
{
	my ($db, $query) = @_;
	for (1 .. 1800)
	{
		my $result = eval { $node->safe_psql($db, $query) };
		return 1 if defined $result && $result eq 't';
		usleep(100_000);
	}
	return 0;
}

sub captured_ids
{
	my ($db) = @_;
	return $node->safe_psql($db,
		q{SELECT string_agg(DISTINCT (new_key->>'id'), ',' ORDER BY (new_key->>'id'))
		  FROM flusso.capture_log WHERE op = 'I'});
}

setup_database('app');
wait_for_worker('app');
my $oid = $node->safe_psql('app', q{SELECT oid FROM pg_database WHERE datname = 'app'});
is( $node->safe_psql('app', q{SELECT slot_name || ' ' || plugin FROM pg_replication_slots}),
	"flusso_$oid flusso", 'the worker created its slot, flusso_<database oid>');
is($node->safe_psql('app', q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'flusso launcher'}),
	'1', 'one launcher');

# The slot is the worker's alone: nothing else can consume it meanwhile.
my ($ret, $stdout, $stderr) = $node->psql('app',
	"SELECT count(*) FROM pg_logical_slot_peek_binary_changes('flusso_$oid', NULL, NULL)");
isnt($ret, 0, 'the slot cannot be read while the worker holds it');
like($stderr, qr/replication slot "flusso_$oid" is active for PID \d+/,
	'it is active for the worker');

# Changes are captured, and the slot confirmed past them once applied.
$node->safe_psql('app', 'INSERT INTO items SELECT i, 0 FROM generate_series(1, 100) i');
my $after_insert = $node->safe_psql('app', 'SELECT pg_current_wal_lsn()');
ok( $node->poll_query_until(
		'app', q{SELECT count(DISTINCT new_key->>'id') = 100 FROM flusso.capture_log}),
	'100 inserts captured');
ok( $node->poll_query_until(
		'app',
		"SELECT confirmed_flush_lsn >= '$after_insert' FROM pg_replication_slots"),
	'the slot is confirmed past the applied changes');

# Traffic the index does not read is confirmed too, so it never retains WAL.
$node->safe_psql('app', 'INSERT INTO unpublished SELECT generate_series(1, 1000)');
my $idle_lsn = $node->safe_psql('app', 'SELECT pg_current_wal_lsn()');
ok( $node->poll_query_until(
		'app', "SELECT confirmed_flush_lsn >= '$idle_lsn' FROM pg_replication_slots"),
	'unpublished traffic is confirmed');
ok($node->poll_query_until('app', q{SELECT phase = 'live' FROM flusso_status()}),
	'flusso_status shows the index live once seeded');
is( $node->safe_psql(
		'app', q{SELECT s.worker_pid = a.pid AND s.slot = 'flusso_' || d.oid
				 AND s.changes_captured >= 100 AND s.batches >= 1 AND s.lag_bytes >= 0
				 FROM flusso_status() s, pg_stat_activity a, pg_database d
				 WHERE a.backend_type = 'flusso worker' AND d.datname = current_database()}),
	't', 'flusso_status shows the worker, its slot and its counters');

# SIGKILL of the worker restarts the whole cluster; nothing is lost.
$node->safe_psql('app', 'INSERT INTO items SELECT i, 0 FROM generate_series(101, 200) i');
my $pid = $node->safe_psql('app',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso worker'});
kill 'KILL', $pid;
ok( poll_through_crash(
		'app', q{SELECT count(DISTINCT new_key->>'id') = 200 FROM flusso.capture_log}),
	'after SIGKILL and the restart it causes, every insert is captured');
wait_for_worker('app');
# and the batch redelivered after the restart is applied, before a crash is armed
my $lsn = $node->safe_psql('app', 'SELECT pg_current_wal_insert_lsn()');
ok( $node->poll_query_until(
		'app', qq{SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots}),
	'the worker catches up after the restart');

# A crash between the sink's commit and the slot's confirmation redelivers.
# The fault is injected by flusso.test_crash_file, which only the build
# `make test` installs has.
SKIP:
{
	skip 'flusso was built without FLUSSO_TEST_HOOKS', 5
	  unless has_test_hook($node, 'app', 'flusso.test_crash_file');
	my $crash_file = arm_crash_file($node, 'app', 'flusso.test_crash_file', 'flusso_crash_once');
	my $before = $node->safe_psql('app', q{SELECT count(*) FROM flusso.capture_log});
	$node->safe_psql('app', 'INSERT INTO items SELECT i, 0 FROM generate_series(201, 300) i');
	ok(poll_through_crash('app', "SELECT pg_stat_file('$crash_file', true) IS NULL"),
		'the injected crash happened');
	ok( poll_through_crash(
			'app', q{SELECT count(DISTINCT new_key->>'id') = 300 FROM flusso.capture_log}),
		'after the crash every insert is captured');
	ok( poll_through_crash(
			'app', q{SELECT count(*) > 100 FROM flusso.capture_log WHERE (new_key->>'id')::int > 200}),
		'the batch applied before the crash is delivered again');
	is(captured_ids('app'), join(',', sort { $a cmp $b } 1 .. 300),
		'the captured set is exactly the inserted rows');
	$node->safe_psql('app', 'ALTER SYSTEM RESET flusso.test_crash_file');
	$node->reload;
	wait_for_worker('app');
}

# A slot dropped by hand is detected, recreated, and indexes marked for seeding.
my $dropped = 0;
for my $try (1 .. 200)
{
	$node->safe_psql('app',
		q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'flusso worker'});
	my ($ret) = $node->psql('app', "SELECT pg_drop_replication_slot('flusso_$oid')");
	if ($ret == 0) { $dropped = 1; last; }
	usleep(50_000);
}
ok($dropped, 'the slot was dropped by hand between two runs of the worker');
wait_for_worker('app');
like($node->safe_psql('app', q{SELECT last_error FROM flusso_status()}),
	qr/replication slot "flusso_\d+" was missing or invalidated and has been created again/,
	'the loss is reported in flusso_status');
# (the worker streams while it seeds: wait for the seed's end to be logged)
my $seeded_again = 0;
for (1 .. 300)
{
	$seeded_again = $node->log_contains(qr/LOG:  flusso: index "items" seeded: \d+ root rows read(?s:.*)replication slot "flusso_\d+" was missing(?s:.*)flusso: index "items" seeded/);
	last if $seeded_again;
	usleep(100_000);
}
ok($seeded_again, 'every index is seeded again');
ok($node->log_contains(qr/WARNING:  replication slot "flusso_\d+" was missing/),
	'and logged as a WARNING');

# A 1M-row transaction decodes in bounded memory.
$node->safe_psql('app', q{ALTER SYSTEM SET flusso.capture_log = off});
$node->safe_psql('app', q{ALTER SYSTEM SET flusso.work_mem = '4MB'});
$node->reload;
my $captured = $node->safe_psql('app', q{SELECT changes_captured FROM flusso_status()});
$pid = $node->safe_psql('app',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso worker'});
$node->safe_psql('app', 'INSERT INTO items SELECT i, 1 FROM generate_series(1000001, 2000000) i');
my $inserted = $node->safe_psql('app', 'SELECT pg_current_wal_insert_lsn()');
# Sample the worker's private memory (shared buffers it touches do not count)
# until the transaction is applied: its documents written, the slot
# confirmed past it.
my $peak = 0;
my $done = 0;
for (1 .. 3000)
{
	my ($anon) = slurp_file("/proc/$pid/status") =~ /RssAnon:\s+(\d+) kB/;
	$peak = $anon if defined $anon && $anon > $peak;
	$done = $node->safe_psql('app',
		"SELECT confirmed_flush_lsn >= '$inserted' FROM pg_replication_slots WHERE slot_name LIKE 'flusso_%'") eq 't';
	last if $done;
	usleep(100_000);
}
ok($done, 'a 1M-row transaction is applied');
is($node->safe_psql('app', "SELECT changes_captured >= $captured + 1000000 FROM flusso_status()"),
	't', 'all of it captured');
cmp_ok($peak, '<', 200 * 1024, "the worker's private memory stayed under 200 MB (peak $peak kB)");
is($node->safe_psql('app', q{SELECT count(*) FROM flusso_docs.items WHERE id::int > 1000000}),
	'1000000', 'and its documents are written');

# Dropping the last index drops the slot; defining one starts the worker again.
$node->safe_psql('app', q{SELECT flusso_drop_index('items')});
ok( $node->poll_query_until(
		'app', q{SELECT count(*) = 0 FROM pg_replication_slots}),
	'dropping the last index drops the slot');
ok( $node->poll_query_until(
		'app', q{SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'flusso worker'}),
	'and stops the worker');
$node->safe_psql('app', "SELECT flusso_create_index('items', \$\$$index\$\$)");
wait_for_worker('app');

# DROP EXTENSION while the worker runs.
$node->safe_psql('app', 'DROP EXTENSION flusso CASCADE');
ok( $node->poll_query_until(
		'app', q{SELECT count(*) = 0 FROM pg_replication_slots}),
	'DROP EXTENSION leaves no slot');
ok( $node->poll_query_until(
		'app', q{SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'flusso worker'}),
	'and no worker');

# Creating a slot waits for a consistent point while an older transaction
# runs, anywhere in the cluster; the worker says so.
$node->safe_psql('postgres', 'CREATE DATABASE waiting');
$node->safe_psql('waiting', q{
	CREATE EXTENSION flusso;
	CREATE TABLE items (id int PRIMARY KEY, n int NOT NULL);
});
my $open = $node->background_psql('postgres');
$open->query_safe('BEGIN');
$open->query_safe('SELECT txid_current()');
$node->safe_psql('waiting', "SELECT flusso_create_index('items', \$\$$index\$\$)");
ok( $node->poll_query_until(
		'waiting', q{SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE backend_type = 'flusso worker' AND datname = 'waiting'
		  AND query = 'waiting for a consistent point'}),
	'the worker reports waiting for a consistent point');
$open->query_safe('COMMIT');
$open->quit;
wait_for_worker('waiting');

# DROP DATABASE, with and without FORCE, while a worker runs.
for my $force ('', ' WITH (FORCE)')
{
	my $db = $force ? 'doomed_force' : 'doomed';
	setup_database($db);
	wait_for_worker($db);
	my $slot = 'flusso_' . $node->safe_psql('postgres',
		"SELECT oid FROM pg_database WHERE datname = '$db'");
	is($node->safe_psql('postgres',
			"SELECT count(*) FROM pg_replication_slots WHERE slot_name = '$slot' AND active"),
		'1', "the slot of $db is active");
	$node->safe_psql('postgres', "DROP DATABASE $db$force");
	is($node->safe_psql('postgres',
			"SELECT count(*) FROM pg_replication_slots WHERE slot_name = '$slot'"),
		'0', "DROP DATABASE$force succeeds and leaves no slot of it");
}

done_testing();

# flusso_wait(): read your own writes, through the table sink.  A session
# that commits and then calls flusso_wait() finds its change in the
# documents every time; the call returns at once when nothing is pending,
# false at its timeout while the worker cannot get there (the documents
# table locked), and false at once, with a NOTICE saying why, while the
# index is being seeded, when the worker stops while a session waits, and
# before the worker is back.  A crash of the server ends a waiting session
# with an error, never a true; once the server is back, the change is there
# when flusso_wait() says so.  Inside a transaction that holds a lock the
# worker's writes wait for, false at once with a NOTICE.  Misuse is refused: inside a transaction that
# wrote, without flusso_admin, without SELECT on the documents, with a
# negative timeout.

use strict;
use warnings;

use IPC::Run;
use Time::HiRes qw(time usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('wait');
$node->append_conf('postgresql.conf', "restart_after_crash = on\n");
$node->restart;
things_database($node, 'shop');
ok($node->poll_query_until('shop', q{SELECT phase = 'live' FROM flusso_status() WHERE index = 'things'}),
	'the index is live');

# Nothing pending: at once.
my $t0 = time;
is($node->safe_psql('shop', q{SELECT flusso_wait('things')}), 't', 'nothing pending: true');
ok(time - $t0 < 2, sprintf('and at once (%.3f s)', time - $t0));

# Write, wait, read, a few hundred times: the change is there every time.
my $misses = 0;
for my $i (1 .. 300)
{
	my $id = 1 + $i % 50;
	my $out = $node->safe_psql('shop',
		"UPDATE things SET label = 'label $i' WHERE id = $id;\n"
		  . "SELECT flusso_wait('things', '30s');\n"
		  . "SELECT doc->>'label' FROM flusso_docs.things WHERE id = '$id';");
	$misses++ if $out ne "t\nlabel $i";
}
is($misses, 0, 'write, wait, read: 300 of 300 found their own change');

# A statement that returns with nothing pending on another index, while
# this one is held back, would say nothing: hold the documents table so
# the worker cannot write, and the wait ends at its timeout, false.
sub start_session
{
	my ($db, $sql) = @_;
	my %s = (in => $sql, out => '', err => '');
	$s{run} = IPC::Run::start([ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr($db) ],
		'<', \$s{in}, '>', \$s{out}, '2>', \$s{err});
	# IPC::Run feeds the input only as it is pumped: all of it, now
	$s{run}->pump while length $s{in};
	return \%s;
}
my $lock = start_session('shop', "BEGIN;\nLOCK TABLE flusso_docs.things IN ACCESS EXCLUSIVE MODE;\nSELECT 'locked';\n");
$lock->{run}->pump until $lock->{out} =~ /locked/;
$node->safe_psql('shop', q{UPDATE things SET label = 'held back' WHERE id = 7});
$t0 = time;
is($node->safe_psql('shop', q{SELECT flusso_wait('things', '1.5s')}), 'f',
	'the worker cannot write the documents: false');
my $took = time - $t0;
ok($took >= 1.4 && $took < 10, sprintf('at the timeout (%.2f s of 1.5)', $took));

# The worker stops while a session waits: false at once, with the reason.
my $waiter = start_session('shop', "SELECT flusso_wait('things', '120s');\n");
ok(poll_until(sub { $node->safe_psql('shop',
		q{SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT flusso_wait%' AND state = 'active'}) eq '1' }),
	'a session waits');
my $worker = $node->safe_psql('shop', q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso worker'});
$t0 = time;
$node->safe_psql('shop', "SELECT pg_terminate_backend($worker)");
$waiter->{run}->finish;
$took = time - $t0;
is($waiter->{out}, "f\n", 'the worker stopped: the waiting session gets false');
ok($took < 10, sprintf('promptly (%.2f s of a 120 s timeout)', $took));
like($waiter->{err}, qr/No flusso worker is following this database's changes now/,
	'and a NOTICE says why');
$lock->{in} .= "COMMIT;\n";
$lock->{run}->finish;
ok(poll_until(sub { $node->safe_psql('shop', q{SELECT flusso_wait('things', '1s')}) eq 't' }),
	'the worker is back: the wait returns true');
is($node->safe_psql('shop', q{SELECT doc->>'label' FROM flusso_docs.things WHERE id = '7'}), 'held back',
	'and the change held back is in the documents');

# A seed: false at once, while the documents may miss what it brings in.
$node->safe_psql('shop', q{
	CREATE TABLE parts (id int PRIMARY KEY, name text NOT NULL);
	INSERT INTO parts SELECT g, 'part ' || g FROM generate_series(1, 200000) g;
	ALTER SYSTEM SET flusso.snapshot_chunk_size = 200;
	SELECT pg_reload_conf();
	SELECT flusso_create_index('parts', $$
version: 1
table: parts
primary_key: id
fields:
  - text: name
    required: true
$$);
	SELECT count(*) FROM flusso_provision();});
ok($node->poll_query_until('shop', q{SELECT phase = 'snapshot' AND snapshot_done > 0 FROM flusso_status() WHERE index = 'parts'}),
	'parts is being seeded');
my ($stdout, $stderr);
$t0 = time;
$node->psql('shop', q{SELECT flusso_wait('parts', '60s')}, stdout => \$stdout, stderr => \$stderr);
$took = time - $t0;
is($stdout, 'f', 'an index being seeded: false');
ok($took < 5, sprintf('at once (%.2f s of 60)', $took));
like($stderr, qr/NOTICE:  index "parts" cannot be waited for now\nDETAIL:  The index is being seeded/,
	'with a NOTICE that says why');
is($node->safe_psql('shop', q{SELECT flusso_wait('things', '30s')}), 't',
	'another index is waited for meanwhile');
$node->safe_psql('shop', q{ALTER SYSTEM RESET flusso.snapshot_chunk_size; SELECT pg_reload_conf()});
ok($node->poll_query_until('shop', q{SELECT phase = 'live' FROM flusso_status() WHERE index = 'parts'}),
	'the seed ends');
$node->safe_psql('shop', q{UPDATE parts SET name = 'seeded and changed' WHERE id = 4242});
# the read in a statement of its own: a statement reads what was committed
# when it began
$node->psql('shop', qq{SELECT flusso_wait('parts', '30s');\n}
	. q{SELECT doc->>'name' FROM flusso_docs.parts WHERE id = '4242'},
	stdout => \$stdout, stderr => \$stderr);
is($stdout, "t\nseeded and changed", 'once live, it waits for the change and finds it') or diag($stderr);

# A crash of the server while a session waits: an error, never true.
$lock = start_session('shop', "BEGIN;\nLOCK TABLE flusso_docs.things IN ACCESS EXCLUSIVE MODE;\nSELECT 'locked';\n");
$lock->{run}->pump until $lock->{out} =~ /locked/;
$node->safe_psql('shop', q{UPDATE things SET label = 'before the crash' WHERE id = 8});
$waiter = start_session('shop', "SELECT flusso_wait('things', '120s');\n");
ok(poll_until(sub { $node->safe_psql('shop',
		q{SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT flusso_wait%' AND state = 'active'}) eq '1' }),
	'a session waits before the crash');
$worker = $node->safe_psql('shop', q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso worker'});
kill 'KILL', $worker;
$waiter->{run}->finish;
$lock->{run}->finish;
is($waiter->{out}, '', 'the crash: the waiting session returned nothing');
like($waiter->{err}, qr/terminat|server closed the connection/, 'it lost its connection instead');
ok(poll_until(sub { my ($rc, $out) = $node->psql('shop', q{SELECT flusso_wait('things', '1s')}); $rc == 0 && $out eq 't' }),
	'after the restart, the wait returns true');
is($node->safe_psql('shop', q{SELECT doc->>'label' FROM flusso_docs.things WHERE id = '8'}), 'before the crash',
	'and the change committed before the crash is in the documents');

# A transaction that holds a lock the worker's writes wait for (on the
# index's documents, another index's or flusso's own tables): the worker,
# and every index with it, waits for it to end, so a wait could only time
# out.  false at once, with a NOTICE naming the table; a lock that does
# not stand in the worker's way changes nothing.
for my $table ('flusso_docs.things', 'flusso_docs.parts', 'flusso.signal')
{
	my $began = time;
	my ($rc, $out, $err) = $node->psql('shop', qq{UPDATE things SET label = 'locked out' WHERE id = 11;
		BEGIN; LOCK TABLE $table IN SHARE MODE;
		SELECT flusso_wait('things', '12s'); COMMIT;});
	my $took = time - $began;
	is($out, 'f', "a lock on $table held by the waiting transaction: false");
	cmp_ok($took, '<', 3, sprintf('at once (%.2f s of 12)', $took));
	like($err, qr/NOTICE:  index "things" cannot be waited for now\nDETAIL:  This transaction holds a lock on table \Q$table\E that the flusso worker's writes wait for: no index of the database gets further until it ends\./,
		'with a NOTICE naming the table');
}
is($node->safe_psql('shop', q{BEGIN; LOCK TABLE flusso_docs.things IN ROW EXCLUSIVE MODE;
	SELECT flusso_wait('things', '12s'); COMMIT;}), 't', 'a lock in the way of nothing: true');

# Misuse.
my ($rc, $out, $err) = $node->psql('shop', q{BEGIN; UPDATE things SET label = 'mine' WHERE id = 9; SELECT flusso_wait('things'); COMMIT;});
like($err, qr/ERROR:  flusso_wait\(\) cannot wait for the changes of its own transaction/,
	'inside a transaction that wrote: refused');
($rc, $out, $err) = $node->psql('shop', q{SELECT flusso_wait('things', '-1s')});
like($err, qr/timeout must not be negative/, 'a negative timeout: refused');
($rc, $out, $err) = $node->psql('shop', q{SELECT flusso_wait('nothing')});
like($err, qr/index "nothing" does not exist/, 'an index that does not exist: refused');
$node->safe_psql('shop', q{CREATE ROLE stranger LOGIN; CREATE ROLE helper LOGIN IN ROLE flusso_admin});
($rc, $out, $err) = $node->psql('shop', q{SELECT flusso_wait('things')}, extra_params => [ '-U', 'stranger' ]);
like($err, qr/permission denied for function flusso_wait/, 'without flusso_admin: refused');
($rc, $out, $err) = $node->psql('shop', q{SELECT flusso_wait('things')}, extra_params => [ '-U', 'helper' ]);
like($err, qr/permission denied/, 'a flusso_admin member who may not read the documents: refused');
$node->safe_psql('shop', q{GRANT SELECT ON flusso_docs.things TO helper});
($rc, $out, $err) = $node->psql('shop', q{SELECT flusso_wait('things', '10s')}, extra_params => [ '-U', 'helper' ]);
is($out, 't', 'with SELECT on the documents: it waits');

$node->stop;
done_testing();

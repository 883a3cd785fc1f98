# One slow index never holds back the others.  A flusso_admin member's
# index over a small table, whose raw filter sleeps 0.2 s a row, beside an
# index over users: 197 rows inserted into the slow one's table owe it
# 40 s of builds, yet a user renamed a second later is in its documents
# within 2 s, while the slow index works through its backlog in turns.
# flusso_status() says which index is behind, and by how much;
# flusso_check() says what its documents cost.  Both verify clean once the
# backlog is built.  A build that outlasts flusso.build_timeout sets its
# index aside, in phase error with the reason, and flusso_resnapshot()
# brings it back.

use strict;
use warnings;

use Time::HiRes qw(time usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('neighbour');
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', q{
CREATE EXTENSION flusso;
CREATE TABLE users (id int PRIMARY KEY, name text NOT NULL);
INSERT INTO users SELECT g, 'user ' || g FROM generate_series(1, 1000) g;
SELECT flusso_create_index('users', $$
version: 1
table: users
primary_key: id
fields:
  - integer: id
    required: true
  - text: name
    required: true
$$);
CREATE ROLE mallory LOGIN;
GRANT flusso_admin TO mallory;
GRANT CREATE ON SCHEMA public TO mallory;
});
$node->safe_psql('app', q{
SET ROLE mallory;
CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL);
INSERT INTO notes VALUES (1, 'the first note');
SELECT flusso_create_index('slow', $$
version: 1
table: notes
primary_key: id
filters:
  - { raw: "pg_sleep(0.2) IS NOT NULL" }
fields:
  - text: body
    required: true
$$);
});
$node->safe_psql('app', 'SELECT count(*) FROM flusso_provision()');
ok(database_caught_up($node, 'app'), 'both indexes are live');

# 197 notes owe the slow index about 40 s of builds; a second later, a user
# is renamed.
$node->safe_psql('app',
	q{SET ROLE mallory; INSERT INTO notes SELECT g, 'note ' || g FROM generate_series(2, 198) g});
ok($node->poll_query_until('app', q{SELECT lag_seconds > 0 FROM flusso_status() WHERE index = 'slow'}),
	'the slow index is behind');
usleep(1_000_000);
my $renamed = time;
$node->safe_psql('app', q{UPDATE users SET name = 'renamed' WHERE id = 42});
ok($node->poll_query_until('app', q{SELECT doc->>'name' = 'renamed' FROM flusso_docs.users WHERE id = '42'}),
	'the rename reaches the users documents');
my $took = time - $renamed;
cmp_ok($took, '<', 2, sprintf('within 2 s of the commit (%.2f s), beside 40 s of the slow index\'s builds', $took));

# Each index's own lag: the slow one behind, the users index not.
my ($slow_lag, $users_lag) = split /\|/, $node->safe_psql('app',
	q{SELECT (SELECT lag_seconds FROM flusso_status() WHERE index = 'slow'),
		(SELECT lag_seconds FROM flusso_status() WHERE index = 'users')});
cmp_ok($slow_lag, '>', 1, "flusso_status() says the slow index is behind ($slow_lag s)");
cmp_ok($users_lag, '<', 1, "and the users index is not ($users_lag s)");
is($node->safe_psql('app', q{SELECT phase FROM flusso_status() WHERE index = 'slow'}), 'live',
	'the slow index is live, working through its backlog');
like($node->safe_psql('app', q{SELECT message FROM flusso_check() WHERE index = 'slow' AND severity = 'warning'
		AND message LIKE 'the documents of this index are slow to build%'}),
	qr/^the documents of this index are slow to build: \d+\.\d ms each lately, so it builds about \d+ a second; it owes \d+, the oldest for \d+ s, and falls behind alone$/,
	'flusso_check() says what its documents cost');
is($node->safe_psql('app', q{SELECT count(*) FROM flusso_check() WHERE index = 'users'
		AND message LIKE '%slow to build%'}),
	'0', 'and nothing of the users index');

# Another change of the users index, while the slow one still owes.
$renamed = time;
$node->safe_psql('app', q{UPDATE users SET name = 'renamed again' WHERE id = 43});
ok($node->poll_query_until('app', q{SELECT doc->>'name' = 'renamed again' FROM flusso_docs.users WHERE id = '43'}),
	'a second rename reaches the users documents');
$took = time - $renamed;
cmp_ok($took, '<', 2, sprintf('also within 2 s (%.2f s)', $took));

# The backlog is built in the end; nothing lost, nothing out of place
# (flusso_verify('slow') would take 40 s more: its documents are compared
# with the notes themselves).
ok(database_caught_up($node, 'app'), 'the slow index catches up');
is($node->safe_psql('app', q{SELECT count(*) FROM flusso_docs.slow d
		JOIN notes n ON d.id = n.id::text AND d.doc->>'body' = n.body}),
	'198', 'with every note, as it is');
is($node->safe_psql('app', q{SELECT count(*) FROM flusso_docs.slow}), '198', 'and nothing else');
is($node->safe_psql('app', q{SELECT count(*) FROM flusso_verify('users')}), '0',
	'the users index verifies clean');

# Most notes go (a deleted row builds nothing: no sleep).
$node->safe_psql('app', q{SET ROLE mallory; DELETE FROM notes WHERE id > 10});
ok(database_caught_up($node, 'app'), 'deleted notes are deleted from the slow index');
is($node->safe_psql('app', q{SELECT count(*) FROM flusso_docs.slow}), '10', 'ten left');

# A build that outlasts flusso.build_timeout: its index alone is set aside.
$node->safe_psql('app', q{ALTER SYSTEM SET flusso.build_timeout = '300ms'; SELECT pg_reload_conf()});
$node->safe_psql('app', q{SET ROLE mallory; UPDATE notes SET body = 'changed' WHERE id <= 3});
ok( $node->poll_query_until('app', q{SELECT phase = 'error' AND last_error LIKE
		'building this index took longer than flusso.build_timeout (300 ms), and was canceled; the index is set aside until its definition is replaced or flusso_resnapshot() is called%'
		FROM flusso_status() WHERE index = 'slow'}),
	'a build longer than flusso.build_timeout sets the slow index aside, saying why');
$node->safe_psql('app', q{UPDATE users SET name = 'renamed once more' WHERE id = 44});
ok($node->poll_query_until('app', q{SELECT doc->>'name' = 'renamed once more' FROM flusso_docs.users WHERE id = '44'}),
	'the users index goes on');
is($node->safe_psql('app', q{SELECT phase FROM flusso_status() WHERE index = 'users'}), 'live', 'live');
$node->safe_psql('app', q{ALTER SYSTEM RESET flusso.build_timeout; SELECT pg_reload_conf()});
$node->safe_psql('app', q{SET ROLE mallory; SELECT flusso_resnapshot('slow')});
ok(database_caught_up($node, 'app'), 'flusso_resnapshot() brings the slow index back');
is($node->safe_psql('app', q{SELECT count(*) FROM flusso_docs.slow WHERE doc->>'body' = 'changed'}),
	'3', 'with the changes made while it was set aside');
is($node->safe_psql('app', q{SELECT (SELECT count(*) FROM flusso_verify('users'))
		+ (SELECT count(*) FROM flusso_verify('slow'))}),
	'0', 'both indexes verify clean');

$node->stop;
done_testing();

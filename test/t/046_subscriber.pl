# flusso on a subscriber, beside a publisher that has no flusso (a managed
# PostgreSQL): the publisher publishes users and orders, the subscriber
# subscribes with streaming on, and its flusso keeps the people index (each
# user with the count of its orders) and the emails index.  people is
# created before the subscription copies the tables, emails after; both
# end up equal to the publisher's rows.  flusso_wait(..., upstream_lsn =>
# the publisher's position after a commit) returns true only once that
# commit is in the documents: after single changes, a transaction over
# both tables, deletes, a TRUNCATE, a transaction large enough to be
# streamed, and a restart of each side.  A disabled subscription makes the
# wait false at once, and one whose apply worker fails (the publisher's
# table gained a column the subscriber's lacks) false at the timeout, each
# with a NOTICE, and flusso_status() and flusso_upstream() say so; once
# the subscription applies again, so does flusso.
#
# With FLUSSO_PUBLISHER_INSTALL naming another PostgreSQL installation,
# the publisher runs that version (test/check.sh: 18 beside 15, 15 beside
# 18).

use strict;
use warnings;

use Time::HiRes qw(time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my @other = $ENV{FLUSSO_PUBLISHER_INSTALL} ? (install_path => $ENV{FLUSSO_PUBLISHER_INSTALL}) : ();
my $pub = PostgreSQL::Test::Cluster->new('publisher', @other);
# not init(allows_streaming => 'logical'): 18's modules then write a setting
# (autovacuum_worker_slots) an older publisher refuses
$pub->init;
# a transaction past 64kB of changes is streamed to the subscriber
$pub->append_conf('postgresql.conf', q{
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
logical_decoding_work_mem = '64kB'
});
$pub->start;
note('publisher: ' . $pub->safe_psql('postgres', 'SHOW server_version'));

my $tables = q{
CREATE TABLE users (id int PRIMARY KEY, name text NOT NULL, email text NOT NULL);
CREATE TABLE orders (id int PRIMARY KEY, user_id int NOT NULL, amount int NOT NULL);
};
$pub->safe_psql('postgres', 'CREATE DATABASE app');
$pub->safe_psql('app', $tables . q{
INSERT INTO users SELECT g, 'user ' || g, 'user' || g || '@example.com' FROM generate_series(1, 1000) g;
INSERT INTO orders SELECT g, 1 + g % 1000, g FROM generate_series(1, 3000) g;
CREATE PUBLICATION app FOR TABLE users, orders;
});

my $sub = flusso_node('subscriber');
$sub->append_conf('postgresql.conf', "wal_retrieve_retry_interval = '200ms'\n");
$sub->restart;
note('subscriber: ' . $sub->safe_psql('postgres', 'SHOW server_version'));
$sub->safe_psql('postgres', 'CREATE DATABASE app');
# the subscriber's tables: DDL is not replicated
$sub->safe_psql('app', $tables . q{
CREATE EXTENSION flusso;
SELECT flusso_create_index('people', $$
version: 1
table: users
primary_key: id
fields:
  - text: name
    required: true
  - count: orderCount
    table: orders
    foreign_key: user_id
$$);
SELECT count(*) FROM flusso_provision();
});
ok($sub->poll_query_until('app', q{SELECT phase = 'live' FROM flusso_status() WHERE index = 'people'}),
	'people is live on the empty tables');

# What the publisher holds, as the documents should show it.
sub publisher_people
{
	return $pub->safe_psql('app', q{SELECT count(*) || ' ' || md5(string_agg(
		u.id || ':' || u.name || ':' || (SELECT count(*) FROM orders o WHERE o.user_id = u.id), ','
		ORDER BY u.id)) FROM users u});
}

sub documents_people
{
	return $sub->safe_psql('app', q{SELECT count(*) || ' ' || md5(string_agg(
		id || ':' || (doc->>'name') || ':' || (doc->>'orderCount'), ',' ORDER BY id::int))
		FROM flusso_docs.people});
}

sub publisher_lsn
{
	return $pub->safe_psql('app', 'SELECT pg_current_wal_lsn()');
}

# flusso_wait() for a publisher position: its answer and NOTICEs.
sub wait_upstream
{
	my ($index, $lsn, $timeout) = @_;
	my ($out, $err) = ('', '');
	$sub->psql('app', "SELECT flusso_wait('$index', '$timeout', upstream_lsn => '$lsn')",
		stdout => \$out, stderr => \$err, on_error_die => 1);
	return ($out, $err);
}

my $connstr = $pub->connstr('app') =~ s/'//gr;
$sub->safe_psql('app',
	"CREATE SUBSCRIPTION sub CONNECTION '$connstr' PUBLICATION app WITH (streaming = on)");
ok($sub->poll_query_until('app',
		q{SELECT count(*) = 2 FROM pg_subscription_rel WHERE srsubstate = 'r'}),
	'the subscription copied both tables');
my ($answer) = wait_upstream('people', publisher_lsn(), '60s');
is($answer, 't', 'a wait for the publisher after the copy: true');
is(documents_people(), publisher_people(),
	'people, created before the copy, holds every copied row');
is($sub->safe_psql('app', q{SELECT state || ' ' || tables || ' ' || tables_copying
		|| ' ' || (problem IS NULL) FROM flusso_upstream()}),
	'applying 2 0 true', 'flusso_upstream(): applying, both tables synchronized');

$sub->safe_psql('app', q{SELECT flusso_create_index('emails', $$
version: 1
table: users
primary_key: id
fields:
  - keyword: email
    required: true
$$)});
ok($sub->poll_query_until('app', q{SELECT phase = 'live' FROM flusso_status() WHERE index = 'emails'}),
	'emails, created after the copy, is seeded');
is($sub->safe_psql('app', q{SELECT count(*) FROM flusso_docs.emails}), '1000',
	'emails holds the 1000 copied users');

# Read your writes across the hop: commit on the publisher, wait on the
# subscriber with the publisher's position, read.
my ($misses, @took) = (0);
for my $i (1 .. 100)
{
	my $id = 1 + ($i * 7) % 1000;
	$pub->safe_psql('app', "UPDATE users SET name = 'renamed $i' WHERE id = $id");
	my $lsn = publisher_lsn();
	my $t0 = time;
	($answer) = wait_upstream('people', $lsn, '30s');
	push @took, time - $t0;
	my $name = $sub->safe_psql('app', "SELECT doc->>'name' FROM flusso_docs.people WHERE id = '$id'");
	$misses++ if $answer ne 't' || $name ne "renamed $i";
}
is($misses, 0, 'commit on the publisher, wait on the subscriber, read: 100 of 100 found the change');
@took = sort { $a <=> $b } @took;
note(sprintf('publisher commit to flusso_wait() true: p50 %.1f ms, max %.1f ms',
		1000 * $took[49], 1000 * $took[-1]));

# Every change kind: a transaction over both tables, deletes, a TRUNCATE.
$pub->safe_psql('app', q{
BEGIN;
INSERT INTO users VALUES (1001, 'newcomer', 'new@example.com');
INSERT INTO orders SELECT 5000 + g, 1001, g FROM generate_series(1, 3) g;
UPDATE orders SET user_id = 2 WHERE user_id = 1;
DELETE FROM users WHERE id BETWEEN 900 AND 909;
COMMIT;
});
($answer) = wait_upstream('people', publisher_lsn(), '30s');
is($answer, 't', 'a transaction over both tables: waited for');
is(documents_people(), publisher_people(), 'and the documents equal the publisher\'s rows');
is($sub->safe_psql('app', q{SELECT doc->>'orderCount' FROM flusso_docs.people WHERE id = '1001'}), '3',
	'the new user counts its three orders');

$pub->safe_psql('app', 'TRUNCATE orders');
($answer) = wait_upstream('people', publisher_lsn(), '30s');
is($answer, 't', 'a TRUNCATE: waited for');
is($sub->safe_psql('app', q{SELECT count(*) FROM flusso_docs.people WHERE doc->>'orderCount' <> '0'}), '0',
	'and no document counts an order');

# A transaction large enough that the publisher streams it before it ends.
$pub->safe_psql('app', q{INSERT INTO orders SELECT g, 1 + g % 990, g FROM generate_series(1, 20000) g});
($answer) = wait_upstream('people', publisher_lsn(), '60s');
is($answer, 't', 'a large transaction: waited for');
is(documents_people(), publisher_people(), 'and the documents equal the publisher\'s rows');
ok($pub->poll_query_until('app', q{SELECT stream_txns > 0 FROM pg_stat_replication_slots WHERE slot_name = 'sub'}),
	'the publisher streamed it');

# Disabled: the wait is false at once, saying so; the status says the
# documents are as of the last change applied.
$sub->safe_psql('app', 'ALTER SUBSCRIPTION sub DISABLE');
ok($sub->poll_query_until('app', q{SELECT state = 'disabled' FROM flusso_upstream()}),
	'flusso_upstream(): disabled');
$pub->safe_psql('app', q{UPDATE users SET name = 'while disabled' WHERE id = 5});
my $t0 = time;
my ($out, $err) = wait_upstream('people', publisher_lsn(), '30s');
is($out, 'f', 'subscription disabled: false');
ok(time - $t0 < 5, sprintf('at once (%.2f s)', time - $t0));
like($err, qr/subscription "sub" is disabled: the documents hold the publisher's changes up to/,
	'with a NOTICE saying why');
like($sub->safe_psql('app', q{SELECT string_agg(DISTINCT last_error, ' ') FROM flusso_status()}),
	qr/^subscription "sub" is disabled: the documents hold the publisher's changes up to the last one it applied \(publisher position [0-9A-F]+\/[0-9A-F]+\), none after$/,
	'flusso_status(): each index says the documents are as of the last change applied');
$sub->safe_psql('app', 'ALTER SUBSCRIPTION sub ENABLE');
($answer) = wait_upstream('people', publisher_lsn(), '60s');
is($answer, 't', 'enabled again: true');
is($sub->safe_psql('app', q{SELECT doc->>'name' FROM flusso_docs.people WHERE id = '5'}), 'while disabled',
	'with the change made meanwhile');
is($sub->safe_psql('app', q{SELECT count(*) FROM flusso_status() WHERE last_error IS NOT NULL}), '0',
	'flusso_status(): no error');

# Broken: the publisher's table gains a column the subscriber's lacks (DDL
# is not replicated); the apply worker fails at the next change and is
# started again only a minute later.
$sub->safe_psql('app', q{ALTER SYSTEM SET wal_retrieve_retry_interval = '1min'});
$sub->reload;
$pub->safe_psql('app', q{ALTER TABLE users ADD COLUMN nickname text;
	UPDATE users SET name = 'after the DDL', nickname = 'n' WHERE id = 6});
my $lsn = publisher_lsn();
my $stopped = q{SELECT state = 'stopped' AND apply_errors > 0 FROM flusso_upstream()};
ok(poll_until(sub { $sub->safe_psql('app', $stopped) eq 't' && sleep(1) && $sub->safe_psql('app', $stopped) eq 't' }),
	'flusso_upstream(): stopped, after apply errors');
like($sub->safe_psql('app', q{SELECT string_agg(DISTINCT last_error, ' ') FROM flusso_status()}),
	qr/^subscription "sub" applies nothing: its apply worker is not running \([0-9]+ apply errors so far; the server log says why\)/,
	'flusso_status(): the documents are as of the last change applied');
$t0 = time;
($out, $err) = wait_upstream('people', $lsn, '2s');
is($out, 'f', 'apply worker failing: false');
ok(time - $t0 >= 1.9, sprintf('at the timeout (%.2f s of 2)', time - $t0));
like($err, qr/subscription "sub" applies nothing/, 'with a NOTICE saying why');
ok($sub->log_contains('is missing replicated column'), 'the server log says why');
$sub->safe_psql('app', q{ALTER TABLE users ADD COLUMN nickname text});
$sub->safe_psql('app', q{ALTER SYSTEM RESET wal_retrieve_retry_interval});
$sub->reload;
($answer) = wait_upstream('people', $lsn, '60s');
is($answer, 't', 'the subscriber\'s table caught up: true');
is($sub->safe_psql('app', q{SELECT doc->>'name' FROM flusso_docs.people WHERE id = '6'}), 'after the DDL',
	'with the change the apply worker had failed on');

# A restart of each side.
$pub->restart;
$pub->safe_psql('app', q{UPDATE users SET name = 'after the publisher restarted' WHERE id = 7});
($answer) = wait_upstream('people', publisher_lsn(), '60s');
is($answer, 't', 'the publisher restarted: true');
is($sub->safe_psql('app', q{SELECT doc->>'name' FROM flusso_docs.people WHERE id = '7'}),
	'after the publisher restarted', 'with the change made after');
$sub->restart;
$pub->safe_psql('app', q{UPDATE users SET name = 'after the subscriber restarted' WHERE id = 8});
($answer) = wait_upstream('people', publisher_lsn(), '60s');
is($answer, 't', 'the subscriber restarted: true');
is($sub->safe_psql('app', q{SELECT doc->>'name' FROM flusso_docs.people WHERE id = '8'}),
	'after the subscriber restarted', 'with the change made after');

is(documents_people(), publisher_people(), 'at the end, people equals the publisher\'s rows');
is($sub->safe_psql('app', q{SELECT count(*) FROM flusso_docs.emails}),
	$pub->safe_psql('app', q{SELECT count(*) FROM users}), 'and emails has a document per user');
is($sub->safe_psql('app',
		q{SELECT (SELECT count(*) FROM flusso_verify('people')) + (SELECT count(*) FROM flusso_verify('emails'))}),
	'0', 'flusso_verify(): every document equals a fresh build');

# Misuse: a subscription that is not there, a subscription without a position.
my ($ret, $stdout, $stderr) = $sub->psql('app',
	q{SELECT flusso_wait('people', '1s', upstream_lsn => '0/1', subscription => 'nope')});
like($stderr, qr/subscription "nope" does not exist in this database/, 'an unknown subscription is refused');
($ret, $stdout, $stderr) = $sub->psql('app', q{SELECT flusso_wait('people', '1s', subscription => 'sub')});
like($stderr, qr/flusso_wait\(\) takes a subscription only with upstream_lsn/,
	'a subscription without upstream_lsn is refused');

done_testing();

# A worker that is behind builds each document once per catch-up, and in
# short transactions.  Held back while 20 batches each change every
# document, it resolves them all before it builds, and writes each
# document once; held back while 60,000 documents are added, it writes
# them in transactions none longer than flusso.max_transaction_duration
# (pg_stat_activity.xact_start, sampled), and confirms the slot only past
# what it wrote.  Owing many documents while a large write is under way
# (changes of a transaction in progress already decoded), it waits for
# that write before it builds them, and builds each once; a small change
# made meanwhile elsewhere does not wait.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FlussoTest;

my $node = flusso_node('catchup');
$node->append_conf('postgresql.conf', q{
flusso.batch_size = 100
flusso.max_build_delay = '10min'
flusso.max_transaction_duration = '500ms'
});
$node->restart;
$node->safe_psql('postgres', 'CREATE DATABASE shop');
$node->safe_psql('shop', q{
CREATE EXTENSION flusso;
CREATE TABLE things (id int PRIMARY KEY, n int NOT NULL, label text NOT NULL);
INSERT INTO things SELECT g, 0, 'thing ' || g FROM generate_series(1, 100) g;
SELECT flusso_create_index('things', $$
version: 1
table: things
primary_key: id
fields:
  - integer: n
    required: true
  - text: label
    required: true
$$);
SELECT count(*) FROM flusso_provision();
});

sub caught_up { return database_caught_up($node, 'shop') }

# Hold the worker in its next build: a session locks the documents table,
# and a change makes the worker build.
sub hold_worker
{
	my $lock = $node->background_psql('shop');
	$lock->query_safe('BEGIN; LOCK TABLE flusso_docs.things IN ACCESS EXCLUSIVE MODE');
	$node->safe_psql('shop', 'UPDATE things SET label = label WHERE id = 1');
	$node->poll_query_until('shop', q{SELECT count(*) = 1 FROM pg_stat_activity
		WHERE backend_type = 'flusso worker' AND wait_event_type = 'Lock'})
	  or die 'the worker does not wait for the lock';
	return $lock;
}

ok(caught_up(), 'seeded and live');
is($node->safe_psql('shop', 'SELECT count(*) FROM flusso_docs.things'), '100', '100 documents');

# Every document built that is not stored as it built is written to the
# documents table, inserted or updated: a BEFORE INSERT OR UPDATE trigger
# sees every one.
$node->safe_psql('shop', q{
CREATE TABLE public.built (id text NOT NULL);
CREATE FUNCTION public.note_built() RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog AS $$
BEGIN
	INSERT INTO public.built VALUES (NEW.id);
	RETURN NEW;
END $$;
CREATE TRIGGER note_built BEFORE INSERT OR UPDATE ON flusso_docs.things
FOR EACH ROW EXECUTE FUNCTION public.note_built();
});

# Each document built once per catch-up.
my $lock = hold_worker();
$node->safe_psql('shop', 'TRUNCATE built');
for my $i (1 .. 20)
{
	$node->safe_psql('shop', 'UPDATE things SET n = n + 1');
}
my $lsn = $node->safe_psql('shop', 'SELECT pg_current_wal_insert_lsn()');
is($node->safe_psql('shop', qq{SELECT confirmed_flush_lsn < '$lsn' FROM pg_replication_slots
	WHERE slot_name LIKE 'flusso_%'}), 't', 'the worker held back has confirmed none of it');
$lock->query_safe('COMMIT');
$lock->quit;
ok(caught_up(), 'released, it caught up on 20 batches');
# (the document it was held in, built before the 20 changes for a label
# set to the value it had, is stored as it built: not written)
is($node->safe_psql('shop', q{SELECT count(*) || ' builds of ' || count(DISTINCT id) || ' documents' FROM built}),
	'100 builds of 100 documents', 'it built each document once, not 20 times');
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_docs.things WHERE (doc ->> 'n')::int = 20}),
	'100', 'every document has the last change');
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_verify('things')}), '0',
	'and equals a fresh build');

# Short transactions.
$node->safe_psql('shop', q{DROP TRIGGER note_built ON flusso_docs.things});
$node->safe_psql('shop', q{ALTER SYSTEM SET flusso.batch_size = 1000000});
$node->reload;
$lock = hold_worker();
$node->safe_psql('shop', q{INSERT INTO things SELECT g, 0, 'thing ' || g FROM generate_series(101, 60100) g});
$lsn = $node->safe_psql('shop', 'SELECT pg_current_wal_insert_lsn()');
my $released = $node->safe_psql('shop', 'SELECT clock_timestamp()');
$lock->query_safe('COMMIT');
$lock->quit;
# the transaction held waiting for the lock, open since before the insert,
# ends first: only the worker's own transactions count
ok( $node->poll_query_until(
		'shop', qq{SELECT NOT EXISTS (SELECT FROM pg_stat_activity
		  WHERE backend_type = 'flusso worker' AND xact_start < '$released')}),
	'the transaction held by the lock ends');
# sample how long the worker's transaction has been open, until caught up
my ($longest, $samples) = (0, 0);
for (1 .. 100 * $PostgreSQL::Test::Utils::timeout_default)
{
	my ($age, $done) = split /\|/, $node->safe_psql('shop', qq{
		SELECT coalesce((SELECT extract(epoch FROM clock_timestamp() - xact_start) FROM pg_stat_activity
		  WHERE backend_type = 'flusso worker'), 0),
		  (SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name LIKE 'flusso_%')});
	$longest = $age if $age > $longest;
	$samples++;
	last if $done eq 't';
	usleep(20_000);
}
is($node->safe_psql('shop', 'SELECT count(*) FROM flusso_docs.things'), '60100',
	'60,000 documents added while it was held back are written');
cmp_ok($samples, '>', 10, "the worker's transactions were sampled while it caught up ($samples samples)");
# the bound, and what a sample may add to it on a busy machine
cmp_ok($longest, '<', 0.5 + 0.25,
	"no transaction of the worker stayed open longer than flusso.max_transaction_duration (longest $longest s)");
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_verify('things')}), '0',
	'every document equals a fresh build');

# Rows loaded in one transaction, the rows related to them in the next one:
# built once, with their related rows, not once before those.
$node->safe_psql('shop', q{
CREATE TABLE members (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE purchases (id int PRIMARY KEY, member_id int NOT NULL);
CREATE INDEX ON purchases (member_id);
CREATE TABLE scratch (id int);
SELECT flusso_create_index('members', $$
version: 1
table: members
primary_key: id
fields:
  - text: name
    required: true
  - count: purchaseCount
    table: purchases
    foreign_key: member_id
$$);
SELECT count(*) FROM flusso_provision();
});
$node->poll_query_until('shop', q{SELECT bool_and(phase = 'live') FROM flusso_status()})
  or die 'the members index is not live';
ok(caught_up(), 'members seeded');
$node->safe_psql('shop', q{
TRUNCATE built;
CREATE TRIGGER note_built BEFORE INSERT OR UPDATE ON flusso_docs.members
FOR EACH ROW EXECUTE FUNCTION public.note_built();
});
my $captured = $node->safe_psql('shop', 'SELECT max(changes_captured) FROM flusso_status()');
# the purchases' transaction is in progress when the members' commits: the
# worker has decoded its 25,000 changes by the time it resolves the members
my $writer = $node->background_psql('shop');
$writer->query_safe('BEGIN; INSERT INTO purchases SELECT g, g FROM generate_series(1, 25000) g');
$node->safe_psql('shop', q{INSERT INTO members SELECT g, 'member ' || g FROM generate_series(1, 25000) g});
$node->poll_query_until('shop', qq{SELECT max(changes_captured) >= $captured + 25000 FROM flusso_status()})
  or die 'the worker does not resolve the members';
$writer->query_safe('COMMIT');
$writer->quit;
ok(caught_up(), 'caught up on 25,000 members and their purchases');
is($node->safe_psql('shop', q{SELECT count(*) || ' builds of ' || count(DISTINCT id) || ' documents' FROM built}),
	'25000 builds of 25000 documents', 'each member built once, after its purchase');
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_docs.members WHERE (doc ->> 'purchaseCount')::int = 1}),
	'25000', 'every member counts its purchase');

# A large write under way does not hold back a change owing a few documents.
$writer = $node->background_psql('shop');
$writer->query_safe('BEGIN; INSERT INTO scratch SELECT g FROM generate_series(1, 30000) g');
$node->safe_psql('shop', q{UPDATE members SET name = 'renamed' WHERE id = 1});
# (max_build_delay is 10 minutes: waiting for the write would time out)
ok($node->poll_query_until('shop', q{SELECT doc ->> 'name' = 'renamed' FROM flusso_docs.members WHERE id = '1'}),
	'one change is built while a large write is in progress');
$writer->query_safe('ROLLBACK');
$writer->quit;
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_verify('members')}), '0',
	'every member equals a fresh build');

done_testing();

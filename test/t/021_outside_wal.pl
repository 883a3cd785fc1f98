# Rows that change outside the WAL, and values that change without a row
# change, never go stale silently.  A table's inheritance children are not
# read (flusso_check() says so) nor published, so that their UPDATEs keep
# working without a replica identity.  A column dropped and added again
# with a default in one transaction, an enum label renamed, and a column
# retyped without a rewrite to a type that renders differently have the
# indexes reading them seeded again.  An unlogged partition, created so
# or set so, puts the index in error with check's words until it is
# logged again; the index is then seeded with what changed meanwhile.  A
# database whose flusso objects are older commits such DDL with a warning.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('outside_wal');
$node->safe_psql('postgres', 'CREATE DATABASE diary');
$node->safe_psql('diary', q{
CREATE EXTENSION flusso;
CREATE TYPE mood AS ENUM ('sad', 'calm', 'glad');
CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL, mood mood NOT NULL,
	stars int NOT NULL DEFAULT 0, written timestamp NOT NULL DEFAULT '2026-01-02 03:04:05');
CREATE TABLE old_notes () INHERITS (notes);
INSERT INTO notes SELECT g, 'note ' || g, (ARRAY['sad', 'calm', 'glad'])[1 + g % 3]::mood, g
FROM generate_series(1, 30) g;
INSERT INTO old_notes VALUES (100, 'an old note', 'sad', 1, '2026-01-01');
CREATE TABLE events (id int, region text NOT NULL, title text NOT NULL,
	PRIMARY KEY (id, region)) PARTITION BY LIST (region);
CREATE TABLE events_eu PARTITION OF events FOR VALUES IN ('eu');
INSERT INTO events SELECT g, 'eu', 'e' || g FROM generate_series(1, 20) g;
SELECT flusso_create_index('notes', $$
version: 1
table: notes
fields:
  - text: body
    required: true
  - keyword: mood
    required: true
  - integer: stars
    required: true
  - timestamp: written
    required: true
$$);
SELECT flusso_create_index('events', $$
version: 1
table: events
primary_key: [id, region]
fields:
  - keyword: region
    required: true
  - text: title
    required: true
$$);
});
is( $node->safe_psql('diary',
		q{SELECT count(*) FROM flusso_provision() WHERE NOT applied
		AND action NOT LIKE 'replication slot %' AND action NOT LIKE 'index %'}),
	'0', 'provisioned');

sub caught_up { return database_caught_up($node, 'diary') }

sub verified
{
	my ($name) = @_;
	ok(caught_up(), "$name: caught up");
	is( $node->safe_psql('diary',
			q{SELECT (SELECT count(*) FROM flusso_verify('notes'))
			  + (SELECT count(*) FROM flusso_verify('events'))}),
		'0', "$name: every document equals a fresh build");
}

sub phase_is
{
	my ($index, $phase, $name) = @_;
	ok( $node->poll_query_until(
			'diary', "SELECT phase = '$phase' FROM flusso_status() WHERE index = '$index'"),
		$name);
}

ok( $node->poll_query_until('diary', q{SELECT count(*) = 20 FROM flusso_docs.events}),
	'events is seeded');
ok(caught_up(), 'both indexes are live');
my $log;

# A table other tables inherit from is read ONLY: their rows are neither
# published with it nor in the index.
is($node->safe_psql('diary', q{SELECT count(*) FROM flusso_docs.notes}),
	'30', 'the index holds the rows of the table, not those of the tables inheriting from it');
is( $node->safe_psql('diary',
		q{SELECT severity || ': ' || message FROM flusso_check() WHERE index = 'notes'}),
	'warning: table "public.notes" is inherited by public.old_notes, whose rows the index does not read: only the table\'s own rows are published with it',
	'check says so');
is( $node->safe_psql('diary',
		q{SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_publication_tables
		  WHERE pubname = 'flusso' AND schemaname = 'public'}),
	'events,notes', 'the table is published without the tables inheriting from it');
$node->safe_psql('diary', q{UPDATE old_notes SET body = 'an older note' WHERE id = 100});
pass('which update their rows without a replica identity');
verified('inheritance');

# A column dropped and added again with a default, in one transaction:
# the WAL has no row change, every value of the column is new.
$node->safe_psql('diary', q{BEGIN;
	ALTER TABLE notes DROP COLUMN stars;
	ALTER TABLE notes ADD COLUMN stars int NOT NULL DEFAULT 5;
	COMMIT;});
ok( $node->poll_query_until(
		'diary', q{SELECT count(*) = 30 FROM flusso_docs.notes WHERE (doc ->> 'stars')::int = 5}),
	'a column dropped and added again with a default seeds the index again');
verified('a column dropped and added again');

# A column dropped and nothing in its place: the index stops at once.
$node->safe_psql('diary', q{ALTER TABLE notes DROP COLUMN stars});
phase_is('notes', 'error', 'a column an index reads dropped stops the index');
like($node->safe_psql('diary', q{SELECT last_error FROM flusso_status() WHERE index = 'notes'}),
	qr/column "stars" of table "public.notes" does not exist/, 'with check\'s reason');
$node->safe_psql('diary', q{ALTER TABLE notes ADD COLUMN stars int NOT NULL DEFAULT 7});
phase_is('notes', 'live', 'added again, the index is seeded again');
is($node->safe_psql('diary', q{SELECT count(*) FROM flusso_docs.notes WHERE (doc ->> 'stars')::int = 7}),
	'30', 'with the new values');
verified('a column dropped, then added again');

# An enum label renamed: every row with it reads differently.
$node->safe_psql('diary', q{ALTER TYPE mood RENAME VALUE 'calm' TO 'serene'});
ok( $node->poll_query_until(
		'diary', q{SELECT count(*) = 10 FROM flusso_docs.notes WHERE doc ->> 'mood' = 'serene'}),
	'an enum label renamed seeds the indexes reading it again');
verified('an enum label renamed');

# A type change without a rewrite: to a type that renders differently
# (PostgreSQL does not rewrite timestamp to timestamptz under UTC), the
# index is seeded again; between two string types, nothing happens.
$log = -s $node->logfile;
$node->safe_psql('diary', q{SET TimeZone = 'UTC';
	ALTER TABLE notes ALTER COLUMN written TYPE timestamptz});
ok( $node->poll_query_until(
		'diary', q{SELECT count(*) = 30 FROM flusso_docs.notes
		  WHERE doc ->> 'written' = '2026-01-02T03:04:05+00:00'}),
	'a column retyped without a rewrite to a type that renders differently seeds the index again');
ok(!$node->log_contains('table public.notes was rewritten', $log), 'which the stream did not say');
verified('a column retyped without a rewrite');
$log = -s $node->logfile;
$node->safe_psql('diary', q{ALTER TABLE notes ALTER COLUMN body TYPE varchar});
$node->safe_psql('diary', q{UPDATE notes SET body = 'after varchar' WHERE id = 2});
ok( $node->poll_query_until(
		'diary', q{SELECT doc ->> 'body' = 'after varchar' FROM flusso_docs.notes WHERE id = '2'}),
	'text to varchar: the stream goes on');
ok(!$node->log_contains('seeding index', $log), 'and nothing is seeded');

# An unlogged partition: its rows change without a trace in the WAL.
$node->safe_psql('diary',
	q{CREATE UNLOGGED TABLE events_us PARTITION OF events FOR VALUES IN ('us')});
phase_is('events', 'error', 'an unlogged partition stops the index');
my $message =
  'partition public.events_us of table "public.events" is unlogged: its changes are not written to the WAL, so the index cannot follow them';
like($node->safe_psql('diary', q{SELECT last_error FROM flusso_status() WHERE index = 'events'}),
	qr/\Q$message\E/, 'with check\'s words');
is( $node->safe_psql('diary',
		q{SELECT severity || ': ' || message || ' / ' || hint FROM flusso_check() WHERE index = 'events'}),
	"error: $message / ALTER TABLE public.events_us SET LOGGED;", 'which check reports as an error');
is($node->safe_psql('diary', q{SELECT phase FROM flusso_status() WHERE index = 'notes'}),
	'live', 'the other index goes on');
$node->safe_psql('diary', q{INSERT INTO events SELECT g, 'us', 'u' || g FROM generate_series(1, 5) g});
$node->safe_psql('diary', q{ALTER TABLE events_us SET LOGGED});
phase_is('events', 'live', 'logged again, the index is seeded again');
is($node->safe_psql('diary', q{SELECT count(*) FROM flusso_docs.events WHERE id LIKE '%:us'}),
	'5', 'with the rows written while it was unlogged');
verified('an unlogged partition logged again');

# A partition set unlogged, changed, and logged again.
$node->safe_psql('diary', q{ALTER TABLE events_eu SET UNLOGGED});
phase_is('events', 'error', 'a partition set unlogged stops the index');
$node->safe_psql('diary', q{UPDATE events SET title = 'changed unlogged' WHERE id = 1 AND region = 'eu'});
$node->safe_psql('diary', q{ALTER TABLE events_eu SET LOGGED});
phase_is('events', 'live', 'set logged again, the index is seeded again');
is($node->safe_psql('diary', q{SELECT doc ->> 'title' FROM flusso_docs.events WHERE id = '1:eu'}),
	'changed unlogged', 'with the change made while it was unlogged');
verified('a partition set unlogged and logged again');

# A change rolled back asks for nothing.
$log = -s $node->logfile;
$node->safe_psql('diary', q{BEGIN; ALTER TYPE mood RENAME VALUE 'glad' TO 'happy'; ROLLBACK;});
$node->safe_psql('diary', q{UPDATE notes SET body = 'after the rollback' WHERE id = 1});
ok( $node->poll_query_until(
		'diary', q{SELECT doc ->> 'body' = 'after the rollback' FROM flusso_docs.notes WHERE id = '1'}),
	'the stream goes on');
is($node->safe_psql('diary', q{SELECT count(*) FROM flusso.signal WHERE kind = 'altered'}),
	'0', 'no request is left, and a change rolled back made none');
ok(!$node->log_contains('was altered without a row change', $log), 'nor was the index seeded again');

# A database whose flusso objects predate the request: the DDL commits,
# with a warning that says what to do, until the extension is updated.
$node->safe_psql('postgres', 'CREATE DATABASE older');
$node->safe_psql('older', q{
CREATE EXTENSION flusso VERSION '0.4.0';
CREATE TABLE cards (id int PRIMARY KEY, front text NOT NULL, back text NOT NULL);
SELECT flusso_create_index('cards',
  '{"version": 1, "table": "cards", "fields": [{"text": "front", "required": true}]}');});
my $swap = q{BEGIN;
	ALTER TABLE cards RENAME COLUMN front TO flipped;
	ALTER TABLE cards RENAME COLUMN back TO front;
	ALTER TABLE cards RENAME COLUMN flipped TO back;
	COMMIT;};
my ($ret, $out, $err) = $node->psql('older', $swap);
is($ret, 0, 'before ALTER EXTENSION flusso UPDATE, two columns swap names all the same');
like($err, qr/WARNING:  flusso index "cards" will not be seeded again after this change/,
	'with a warning');
$node->safe_psql('older', 'ALTER EXTENSION flusso UPDATE');
$node->safe_psql('older', $swap);
is($node->safe_psql('older', q{SELECT index_name FROM flusso.signal WHERE kind = 'altered'}),
	'cards', 'after it, the swap requests a seed of the index');

$node->stop;
done_testing();

# A batch resolved in several transactions keeps the signals it ended
# with past their commits.  One transaction adds 201,000 publishers no book
# belongs to, then asks for the books index to be seeded again: the worker
# resolves the batch in parts of 200,000 changes, the first held on a lock
# on books past flusso.max_transaction_duration, so that it commits and
# the request arrives in the second transaction (the batch spills past
# flusso.work_mem, and spilled changes are read last, in stream order).  The request is acted on
# (the index is seeded again) and the worker never fails.  The build
# `make test` installs checks after each part that every signal is in the
# memory the worker keeps past the transactions (worker/catchup.c): before,
# the signal of a later part was in SPI's memory of its transaction, which
# a commit frees, and the worker failed on that check.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('resolve_memory');
$node->append_conf('postgresql.conf', q{
flusso.max_transaction_duration = '100ms'
flusso.work_mem = '64kB'
});
$node->restart;
$node->safe_psql('postgres', 'CREATE DATABASE shop');
$node->safe_psql('shop', q{
CREATE EXTENSION flusso;
CREATE TABLE publishers (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE books (id int PRIMARY KEY, title text NOT NULL,
	publisher_id int NOT NULL REFERENCES publishers);
CREATE INDEX ON books (publisher_id);
INSERT INTO publishers VALUES (1, 'Einaudi'), (2, 'Adelphi');
INSERT INTO books VALUES (1, 'Il sistema periodico', 1), (2, 'Se questo è un uomo', 1),
	(3, 'Siddharta', 2);
SELECT flusso_create_index('books', $$
version: 1
table: books
primary_key: id
fields:
  - text: title
    required: true
  - belongs_to: publisher
    column: publisher_id
    table: publishers
    primary_key: id
    fields:
      - keyword: name
        required: true
$$);
SELECT count(*) FROM flusso_provision();
});

ok( $node->poll_query_until(
		'shop', q{SELECT (SELECT count(*) FROM flusso_docs.books) = 3
		  AND (SELECT bool_and(phase = 'live') FROM flusso_status())}),
	'seeded and live');
my $pid = $node->safe_psql('shop', q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso worker'});
my $log_offset = -s $node->logfile;

# The worker will wait for this lock in the first part of the batch, when
# it looks up the books of the publishers added.
my $lock = $node->background_psql('shop');
$lock->query_safe('BEGIN; LOCK TABLE books IN ACCESS EXCLUSIVE MODE');
$node->safe_psql('shop', q{BEGIN;
INSERT INTO publishers SELECT g, 'publisher ' || g FROM generate_series(3, 201002) g;
SELECT flusso_resnapshot('books');
COMMIT});
ok( $node->poll_query_until(
		'shop', q{SELECT count(*) = 1 FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		  WHERE a.backend_type = 'flusso worker' AND NOT l.granted
		  AND l.relation = 'books'::regclass
		  AND l.waitstart < pg_catalog.clock_timestamp() - interval '200 ms'}),
	'the first part of the batch waits on books longer than flusso.max_transaction_duration');
$lock->query_safe('COMMIT');
$lock->quit;

my $lsn = $node->safe_psql('shop', 'SELECT pg_current_wal_insert_lsn()');
ok( $node->poll_query_until(
		'shop', qq{SELECT (SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots
		  WHERE slot_name LIKE 'flusso_%')
		  AND NOT EXISTS (SELECT 1 FROM flusso.signal)
		  AND (SELECT bool_and(phase = 'live') FROM flusso_status())}),
	'the batch was resolved and the index seeded again');
ok( $node->log_contains(
		qr/flusso: re-snapshot of index "books" requested.*flusso: index "books" seeded: 3 root rows read/s,
		$log_offset),
	'the request of the second part was acted on');
is($node->safe_psql('shop', q{SELECT coalesce(string_agg(DISTINCT last_error, '; '), 'none') FROM flusso_status()}),
	'none', 'the worker recorded no error');
is($node->safe_psql('shop', q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso worker'}),
	$pid, 'and is the one that started');
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_verify('books')}), '0',
	'every document equals a fresh build');

done_testing();

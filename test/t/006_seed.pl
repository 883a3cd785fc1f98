# Seeding by watermarks: 30,000 books seeded while a random workload
# writes, with no worker transaction older than a chunk; a SIGKILL mid-seed
# resumes at the saved cursor; a re-snapshot by signal; definitions
# replaced with and without a change of meaning; empty, single-row and
# composite-key tables; and a root table truncated mid-seed.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use FlussoTest;

my $node = flusso_node('seed');
$node->append_conf('postgresql.conf',
	"flusso.snapshot_chunk_size = 500\nrestart_after_crash = on\n");
$node->restart;
load_library($node, 'library');

# 30,000 more books, with reviews, loans and authors of their own; the
# foreign keys indexed, as they would be in production
$node->safe_psql(
	'library', q{
	CREATE INDEX ON reviews (book_id);
	CREATE INDEX ON loans (book_id);
	CREATE INDEX ON "references" (book_id);
	CREATE INDEX ON book_authors (author_id);
	INSERT INTO books (id, isbn, title, language, pages, publisher_id, keywords)
	SELECT i, 'isbn-' || i, 'Generated book ' || i, (ARRAY['en', 'it', 'fr'])[1 + i % 3],
	       100 + i % 400, 1 + i % 3, ARRAY['k' || i % 10]
	FROM generate_series(1001, 31000) i;
	INSERT INTO reviews (id, book_id, stars, body, hidden, created_at)
	SELECT 1000 + i, 1001 + (i * 7) % 30000, 1 + i % 5, 'review ' || i, i % 9 = 0,
	       '2025-01-01'::timestamptz + i * interval '1 minute'
	FROM generate_series(1, 20000) i;
	INSERT INTO book_authors (book_id, author_id) SELECT i, 1 + i % 4 FROM generate_series(1001, 31000) i;
	ANALYZE});
my $books = $node->safe_psql('library', 'SELECT count(*) FROM books WHERE NOT withdrawn');

sub books_verified
{
	my ($name) = @_;
	ok(library_caught_up($node), "$name: caught up and live");
	is($node->safe_psql('library',
			"SELECT coalesce(string_agg(id || ' ' || problem, ', '), '') FROM (SELECT * FROM flusso_verify('books') LIMIT 10) v"),
		'', "$name: every document equals a fresh build");
}

sub docs_oid
{
	return $node->safe_psql('library', q{SELECT 'flusso_docs.books'::regclass::oid});
}

# Poll across a crash restart: connection failures are retried, not fatal.
sub poll_through_crash
{
	my ($query) = @_;
	for (1 .. 1800)
	{
		my $result = eval { $node->safe_psql('library', $query) };
		return 1 if defined $result && $result eq 't';
		usleep(100_000);
	}
	return 0;
}

# 1. The first seed, while a random workload writes.
srand(20261130);
# (provisioned first: ALTER TABLE ... REPLICA IDENTITY and the workload's
# transactions could deadlock, which is not what this tests)
my $definition = slurp_file(fixture_path('books.schema.yml'));
$node->safe_psql('library', "SELECT flusso_create_index('books', \$def\$$definition\$def\$)");
$node->safe_psql('library', 'SELECT count(*) FROM flusso_provision()');
my ($workload, $err) = start_library_workload($node, 1500, 'seed_workload');

# Watch the seed progress while the workload writes.
ok( $node->poll_query_until(
		'library', q{SELECT phase = 'snapshot' AND snapshot_done > 0 AND snapshot_done < snapshot_total
		  FROM flusso_status()}),
	'flusso_status shows phase snapshot, snapshot_done below snapshot_total');
ok($node->poll_query_until('library', q{SELECT phase = 'live' FROM flusso_status()}),
	'then phase live');
ok($workload->pumpable, 'the workload was still writing when the seed completed');
$workload->finish;
is($$err, '', 'the workload ran without error');
books_verified('seeded under a concurrent workload');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso.signal}),
	'0', 'every watermark was deleted once consumed');
is($node->safe_psql('library', q{SELECT count(*) FROM pg_tables WHERE schemaname = 'flusso_seed'}),
	'0', 'the shadow table was swapped in');
is($node->safe_psql('library', q{SELECT (SELECT count(*) FROM flusso_docs.books) = (SELECT count(*) FROM books WHERE NOT withdrawn)}),
	't', 'one document per book that is not withdrawn');
# (the workload withdraws books at random: the last one it left)
is( $node->safe_psql('library', q{SELECT d.doc ->> 'title' FROM flusso_docs.books d
		WHERE d.id = (SELECT max(id)::text FROM books WHERE NOT withdrawn AND id <= 31000)}),
	$node->safe_psql('library', q{SELECT title FROM books
		WHERE id = (SELECT max(id) FROM books WHERE NOT withdrawn AND id <= 31000)}),
	'the last generated book has its document');

# 2. SIGKILL mid-seed: the seed resumes after its saved cursor.
my $before = docs_oid();
$node->safe_psql('library', q{SELECT flusso_resnapshot('books')});
ok( $node->poll_query_until(
		'library', q{SELECT done >= 5000 FROM flusso.seed WHERE index_name = 'books'}),
	'the re-snapshot has written 5,000 root rows');
my $pid = $node->safe_psql('library',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso worker'});
my $log_offset = -s $node->logfile;
kill 'KILL', $pid;
ok(poll_through_crash(q{SELECT phase = 'live' FROM flusso_status()}),
	'after SIGKILL and the restart it causes, the seed completes');
my $log = substr(slurp_file($node->logfile), $log_offset);
my ($resumed) = $log =~ /seeding index "books" from public\.books, resuming after (\d+) root rows/;
ok(defined $resumed && $resumed >= 5000,
	'the seed resumed after the cursor saved before the crash, not from the start ('
	  . ($resumed // 'no resume logged') . ' root rows)');
books_verified('resumed after SIGKILL');
isnt(docs_oid(), $before, 'the re-snapshot swapped in a new table');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso.signal}),
	'0', 'the re-snapshot request is deleted once its seed completed');

# 3. A re-snapshot repairs a document changed behind flusso's back (a
# document the random workload left, whichever that is).
my ($tampered_id, $original) = split /\|/, $node->safe_psql('library',
	q{SELECT id, doc FROM flusso_docs.books ORDER BY id::int LIMIT 1}), 2;
$node->safe_psql('library',
	qq{UPDATE flusso_docs.books SET doc = '{"tampered": true}' WHERE id = '$tampered_id'});
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('books')}), '1',
	'the tampered document is reported');
$before = docs_oid();
my $started = time();
$node->safe_psql('library', q{SELECT flusso_resnapshot('books')});
# Watch the worker's transactions while it reads and writes chunks (then
# done equals total, and the one step left builds the GIN indexes).
my ($samples, $oldest) = (0, 0);
for (1 .. 6000)
{
	my ($phase, $done, $total, $age) = split /\|/, $node->safe_psql(
		'library', q{SELECT s.phase, s.snapshot_done, s.snapshot_total,
		  coalesce((SELECT extract(epoch FROM clock_timestamp() - xact_start) FROM pg_stat_activity
		            WHERE backend_type = 'flusso worker'), 0)
		  FROM flusso_status() s});
	last if $phase eq 'live' && !$node->safe_psql('library', q{SELECT count(*) FROM flusso.signal});
	if ($phase eq 'snapshot' && $done < $total)
	{
		$samples++;
		$oldest = $age if $age > $oldest;
	}
	usleep(10_000);
}
my $seed_seconds = time() - $started;
cmp_ok($samples, '>=', 5, "the chunks were watched ($samples samples)");
cmp_ok($oldest, '<', $seed_seconds / 4,
	"no transaction of the worker lasted a quarter of the seed (longest $oldest s of $seed_seconds s)");
books_verified('after a re-snapshot');
is($node->safe_psql('library', qq{SELECT doc FROM flusso_docs.books WHERE id = '$tampered_id'}),
	$original, "the tampered document $tampered_id is rebuilt as it was");
isnt(docs_oid(), $before, 'a new table replaced the old one');

# 4. Replacing a definition with the same meaning seeds nothing; a new
# meaning seeds again.
$before = docs_oid();
$log_offset = -s $node->logfile;
my $json = slurp_file(fixture_path('books.schema.json'));
$node->safe_psql('library', "SELECT flusso_create_index('books', \$def\$$json\$def\$, replace => true)");
is($node->safe_psql('library', q{SELECT needs_seed FROM flusso.index WHERE name = 'books'}),
	'f', 'the same meaning in JSON does not ask for a seed');
is(docs_oid(), $before, 'and the documents table stays');
# (a field added alone is taken in place, TAP 050: this one also no
# longer trims title)
(my $changed = $definition) =~ s/^fields:\n/fields:\n  - constant: edition\n    value: 2\n/m;
$changed =~ s/    transforms: \[trim\]\n// or die 'the fixture trims title no more';
$node->safe_psql('library', "SELECT flusso_create_index('books', \$def\$$changed\$def\$, replace => true)");
is($node->safe_psql('library', q{SELECT needs_seed FROM flusso.index WHERE name = 'books'}),
	't', 'a new meaning asks for a seed');
ok( $node->poll_query_until(
		'library', q{SELECT NOT needs_seed FROM flusso.index WHERE name = 'books'}),
	'the new definition is seeded');
books_verified('after a change of meaning');
# The worker ended on purpose for each replacement: the launcher started
# the next one at once, and the one after within 10 s a second later.
my @restarts;
my $restarting;
for my $line (split /\n/, substr(slurp_file($node->logfile), $log_offset))
{
	next unless $line =~ /^\d{4}-\d\d-\d\d (\d\d):(\d\d):(\d\d\.\d+) /;
	my $at = $1 * 3600 + $2 * 60 + $3;
	$restarting = $at if $line =~ /flusso worker for database "library" restarting: the indexes changed/;
	if (defined $restarting && $line =~ /starting logical decoding for slot/)
	{
		push @restarts, $at - $restarting;
		undef $restarting;
	}
}
cmp_ok(scalar(@restarts), '>=', 1, 'the replacement restarted the worker');
cmp_ok($restarts[0], '<', 0.5,
	sprintf('the first planned restart started the next worker at once (%.3f s)', $restarts[0] // -1));
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_docs.books WHERE doc->>'edition' = '2'}),
	$node->safe_psql('library', q{SELECT count(*) FROM books WHERE NOT withdrawn}),
	'every document has the new field');

# 5. Empty, single-row and composite-key root tables.
$node->safe_psql(
	'library', q{
	CREATE TABLE shelf (id int PRIMARY KEY, label text NOT NULL);
	CREATE TABLE desk (id int PRIMARY KEY, label text NOT NULL);
	INSERT INTO desk VALUES (7, 'the only desk');
	SELECT flusso_create_index('shelves',
	  '{"version": 1, "table": "shelf", "fields": [{"keyword": "label", "required": true}]}');
	SELECT flusso_create_index('desks',
	  '{"version": 1, "table": "desk", "fields": [{"keyword": "label", "required": true}]}');
	SELECT flusso_create_index('pairs',
	  '{"version": 1, "table": "book_authors", "primary_key": ["book_id", "author_id"],
	    "fields": [{"long": "book_id", "required": true}, {"integer": "author_id", "required": true},
	               {"integer": "position", "required": true}]}');
	SELECT count(*) FROM flusso_provision();});
ok(library_caught_up($node), 'the new indexes are seeded');
for my $index ('shelves', 'desks', 'pairs')
{
	is($node->safe_psql('library',
			"SELECT coalesce(string_agg(id || ' ' || problem, ', '), '') FROM (SELECT * FROM flusso_verify('$index') LIMIT 10) v"),
		'', "$index: every document equals a fresh build");
}
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_docs.shelves}), '0', 'an empty table seeds nothing');
is($node->safe_psql('library', q{SELECT id || ' ' || (doc->>'label') FROM flusso_docs.desks}),
	'7 the only desk', 'a single-row table seeds its row');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_docs.pairs}),
	$node->safe_psql('library', q{SELECT count(*) FROM book_authors}),
	'a composite key seeds every pair');
is($node->safe_psql('library', q{SELECT doc FROM flusso_docs.pairs WHERE id = '4:1'}),
	'{"book_id": 4, "position": 2, "author_id": 1}', 'a composite key document, id joined with ":"');

# 6. The root table truncated mid-seed.
$node->safe_psql('library', q{SELECT flusso_resnapshot('books')});
ok( $node->poll_query_until(
		'library', q{SELECT done >= 2000 FROM flusso.seed WHERE index_name = 'books'}),
	'a re-snapshot is under way');
$node->safe_psql('library', q{TRUNCATE books CASCADE});
ok(library_caught_up($node), 'the seed ends after the truncate');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_docs.books}), '0',
	'no document is left for a truncated root table');
$node->safe_psql('library', q{INSERT INTO books (id, isbn, title) VALUES (1, 'x', 'After the truncate')});
ok(library_caught_up($node), 'a new book is streamed');
is($node->safe_psql('library', q{SELECT doc->>'title' FROM flusso_docs.books}), 'After the truncate',
	'its document is written');
books_verified('after the truncate');

done_testing();

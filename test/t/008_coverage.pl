# Nothing goes stale silently: whatever makes the stream incomplete for an
# index — a rewrite of a table it reads, a table left out of the
# publication, the publication dropped — has it seeded again (in phase
# error while the publication does not cover it); an index that waits for
# the publication costs next to no CPU time while it waits, and is seeded
# within seconds once the publication covers it.  A slot flusso dropped
# on purpose is not reported lost, and DROP DATABASE ... WITH (FORCE)
# succeeds whatever the worker is doing: running a long statement, waiting
# for a consistent point, waiting for a lock.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('coverage');
ok(streaming_library($node), 'the library indexes are defined and the worker streams');
ok(library_caught_up($node), 'and seeded');

sub verified
{
	my ($name) = @_;
	ok(library_caught_up($node), "$name: caught up");
	is( $node->safe_psql('library',
			q{SELECT (SELECT count(*) FROM flusso_verify('books'))
			  + (SELECT count(*) FROM flusso_verify('authors'))}),
		'0', "$name: every document equals a fresh build");
}

sub phase_is
{
	my ($index, $phase, $name) = @_;
	ok( $node->poll_query_until(
			'library', "SELECT phase = '$phase' FROM flusso_status() WHERE index = '$index'"),
		$name);
}

# A rewrite changes every row and logs no row change.
my $log = -s $node->logfile;
$node->safe_psql('library', q{ALTER TABLE books ALTER COLUMN pages TYPE int USING pages + 1000});
ok($node->wait_for_log(qr/table public\.books was rewritten, so index "books" will be seeded again/, $log),
	'a rewrite of a table the index reads is seen in the stream');
ok( $node->poll_query_until(
		'library', q{SELECT doc ->> 'pages' = '1240' FROM flusso_docs.books WHERE id = '2'}),
	'the index is seeded again with the rewritten values');
verified('after a rewrite');

# A type change the definition cannot read: the index stops, with the
# reason; changed back, it is seeded again.
$node->safe_psql('library', q{ALTER TABLE books ALTER COLUMN pages TYPE text});
phase_is('books', 'error', 'a column changed to a type its field cannot read stops the index');
like($node->safe_psql('library', q{SELECT last_error FROM flusso_status() WHERE index = 'books'}),
	qr/column "pages" of table "public.books" is of type text, which a field of type integer cannot read/,
	'with the reason');
$node->safe_psql('library', q{ALTER TABLE books ALTER COLUMN pages TYPE int USING pages::int - 1000});
phase_is('books', 'live', 'changed back, it is seeded again');
verified('after a type change and back');

# A table left out of the publication: changes to it are lost to the
# index, which is in error until the table is back, then seeded.
$node->safe_psql('library', q{ALTER PUBLICATION flusso DROP TABLE reviews});
$node->safe_psql('library', q{UPDATE reviews SET stars = 2 WHERE id = 1});
phase_is('books', 'error', 'a change to a table the publication no longer covers stops the index');
like($node->safe_psql('library', q{SELECT last_error FROM flusso_status() WHERE index = 'books'}),
	qr/changes to table public\.reviews were not published|publication "flusso" does not publish table public\.reviews/,
	'with the reason');
is($node->safe_psql('library', q{SELECT phase FROM flusso_status() WHERE index = 'authors'}),
	'live', 'an index that does not read the table goes on');
$node->safe_psql('library', q{ALTER PUBLICATION flusso ADD TABLE reviews});
phase_is('books', 'live', 'published again, the index is seeded again');
is($node->safe_psql('library', q{SELECT doc -> 'reviews' -> 1 ->> 'stars' FROM flusso_docs.books WHERE id = '1'}),
	'2', 'with the change it missed');
verified('after a table left the publication and came back');

# The publication dropped, changes, then provisioned again.
$node->safe_psql('library', q{DROP PUBLICATION flusso});
$node->safe_psql('library', q{UPDATE authors SET name = 'Italo G. Calvino' WHERE id = 1;
	UPDATE books SET title = 'Le città invisibili' WHERE id = 1});
phase_is('books', 'error', 'a change made while the publication is dropped stops the index');
$node->safe_psql('library', q{SELECT count(*) FROM flusso_provision()});
phase_is('books', 'live', 'provisioned again, books is seeded again');
phase_is('authors', 'live', 'and authors');
is($node->safe_psql('library', q{SELECT doc ->> 'title' FROM flusso_docs.books WHERE id = '1'}),
	'Le città invisibili', 'with the change it missed');
verified('after the publication was dropped and provisioned again');

# An index whose table the publication leaves out waits for it, reading
# the catalog only when it changes, and is seeded as soon as the
# publication covers the table.
$node->safe_psql(
	'library', q{
	CREATE TABLE shelf (id int PRIMARY KEY, label text NOT NULL);
	INSERT INTO shelf SELECT i, 'shelf ' || i FROM generate_series(1, 10) i;
	SELECT flusso_create_index('shelves',
	  '{"version": 1, "table": "shelf", "fields": [{"keyword": "label", "required": true}]}');});
ok( $node->poll_query_until(
		'library', q{SELECT last_error LIKE '%does not publish table public.shelf'
			FROM flusso_status() WHERE index = 'shelves'}),
	'an index on a table the publication leaves out waits for it');
my $worker = $node->safe_psql('library',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso worker' AND datname = 'library'});

# CPU time (user + system, in clock ticks) the worker has used so far
sub worker_ticks
{
	my @fields = split ' ', (slurp_file("/proc/$worker/stat") =~ s/^.*\) //sr);
	return $fields[11] + $fields[12];
}
SKIP:
{
	skip 'no /proc to read the worker\'s CPU time from', 1 unless -r "/proc/$worker/stat";
	my $before = worker_ticks();
	# a measurement over a window of time, not a wait for a state
	sleep 10;
	# polling the catalog four times a second took about 20 ticks (1/100 s)
	cmp_ok(worker_ticks() - $before, '<', 10, 'waiting costs the worker next to no CPU time');
}
my $covered = time;
$node->safe_psql('library', q{ALTER PUBLICATION flusso ADD TABLE shelf});
phase_is('shelves', 'live', 'covered by the publication, the index is seeded');
cmp_ok(time - $covered, '<=', 10, 'within seconds');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_docs.shelves}), '10', 'every row has its document');
$node->safe_psql('library', q{SELECT flusso_drop_index('shelves')});

# A slot dropped on purpose is not a loss.
$node->safe_psql('library', q{SELECT flusso_drop_index('books'); SELECT flusso_drop_index('authors')});
ok( $node->poll_query_until(
		'library', q{SELECT count(*) = 0 FROM pg_replication_slots}),
	'dropping the last index drops the slot');
$log = -s $node->logfile;
$node->safe_psql('library',
	"SELECT flusso_create_index('books', \$\$" . slurp_file(fixture_path('books.schema.yml')) . "\$\$)");
phase_is('books', 'live', 'a new index gets a new slot and is seeded');
ok(!$node->log_contains('was missing or invalidated', $log), 'and nothing is reported lost');

# DROP DATABASE ... WITH (FORCE) while the worker is busy.
sub worker_waits
{
	my ($db, $condition) = @_;
	return $node->poll_query_until(
		'postgres', qq{SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE backend_type = 'flusso worker' AND datname = '$db' AND $condition});
}

sub drop_succeeds
{
	my ($db, $name) = @_;
	my $oid = $node->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = '$db'");
	my ($ret, $out, $err) = $node->psql('postgres', "DROP DATABASE $db WITH (FORCE)");
	is($ret, 0, "DROP DATABASE WITH (FORCE) succeeds while the worker is $name");
	diag($err) if $ret != 0;
	is($node->safe_psql('postgres', "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'flusso_$oid'"),
		'0', 'and leaves no slot');
}

# running a long statement: a seed whose every row sleeps
load_library($node, 'slow');
$node->safe_psql('slow', q{INSERT INTO books (id, isbn, title, language, metadata)
	SELECT i, 'isbn-' || i, 'Book ' || i, 'en', '{}' FROM generate_series(5, 400) i;
	SELECT flusso_create_index('slow', 'version: 1
table: books
filters: [ { raw: "pg_catalog.pg_sleep(0.05) IS NOT NULL" } ]
fields: [ { text: title, required: true } ]');
	SELECT count(*) FROM flusso_provision()});
ok(worker_waits('slow', q{wait_event = 'PgSleep'}), 'the worker runs a long statement');
drop_succeeds('slow', 'running a long statement');

# waiting for a consistent point: an older transaction holds it up
my $open = $node->background_psql('postgres');
$open->query_safe('BEGIN');
$open->query_safe('SELECT txid_current()');
load_library($node, 'starting');
$node->safe_psql('starting',
	"SELECT flusso_create_index('books', \$\$" . slurp_file(fixture_path('books.schema.yml')) . "\$\$)");
ok(worker_waits('starting', q{query = 'waiting for a consistent point'}),
	'the worker waits for a consistent point');
drop_succeeds('starting', 'waiting for a consistent point');
$open->query_safe('COMMIT');
$open->quit;

# waiting for a lock: a document it builds reads a locked table
load_library($node, 'locked');
$node->safe_psql('locked',
	"SELECT flusso_create_index('books', \$\$" . slurp_file(fixture_path('books.schema.yml')) . "\$\$);
	 SELECT count(*) FROM flusso_provision()");
ok( $node->poll_query_until(
		'locked', q{SELECT phase = 'live' FROM flusso_status() WHERE index = 'books'}),
	'a third database streams');
my $locker = $node->background_psql('locked');
$locker->query_safe('BEGIN');
$locker->query_safe('LOCK TABLE publishers IN ACCESS EXCLUSIVE MODE');
$node->safe_psql('locked', q{UPDATE books SET title = 'Locked out' WHERE id = 1});
ok(worker_waits('locked', q{wait_event_type = 'Lock'}), 'the worker waits for a lock');
drop_succeeds('locked', 'waiting for a lock');
$locker->quit;

$node->stop;
done_testing();

# FlussoTest.pm: what every flusso TAP test shares: a node configured as the
# manual (docs/setup.md) says, and the library fixture loaded into a database.

package FlussoTest;

use strict;
use warnings;

use Cwd qw(abs_path);
use File::Basename qw(dirname);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Exporter 'import';

# test/, where the fixtures and flusso.conf are: test/check.sh names its
# scratch copy; run from the source tree (make prove_installcheck), this
# module's own folder.
BEGIN { $ENV{FLUSSO_TEST_DIR} //= dirname(abs_path(__FILE__)); }

our @EXPORT = qw(flusso_node flusso_settings server_has_setting fixture_path
  load_library streaming_library library_workload start_library_workload
  database_caught_up library_caught_up things_database has_test_hook arm_crash_file
  poll_until);

sub fixture_path
{
	my ($name) = @_;
	return "$ENV{FLUSSO_TEST_DIR}/fixtures/$name";
}

# Does the server on PATH know setting $name?  output_plugin_libraries
# exists only in the minors released from 2026-08-13 on, and older ones
# refuse to start with it.
my %server_settings;
sub server_has_setting
{
	my ($name) = @_;
	if (!%server_settings)
	{
		my ($out, $err);
		IPC::Run::run([ 'postgres', '--describe-config' ], '>', \$out, '2>', \$err)
		  or die "postgres --describe-config failed: $err";
		$server_settings{ (split /\t/)[0] } = 1 for split /\n/, $out;
	}
	return exists $server_settings{$name};
}

# test/flusso.conf, plus output_plugin_libraries listing flusso where the
# server has that setting (test/cluster_conf.sh does the same for the
# scripts).
sub flusso_settings
{
	my $settings = slurp_file("$ENV{FLUSSO_TEST_DIR}/flusso.conf");
	$settings .= "output_plugin_libraries = 'pgoutput, test_decoding, flusso'\n"
	  if server_has_setting('output_plugin_libraries');
	return $settings;
}

# A started node running with flusso_settings().
sub flusso_node
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', flusso_settings());
	$node->start;
	return $node;
}

# Create database $db with the library tables, rows and flusso.
sub load_library
{
	my ($node, $db) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, slurp_file(fixture_path('schema.sql')));
	$node->safe_psql($db, slurp_file(fixture_path('seed.sql')));
	$node->safe_psql($db, 'CREATE EXTENSION flusso');
}

# Database library with the books and authors indexes defined from the
# fixtures and provisioned; true once its worker streams.
sub streaming_library
{
	my ($node) = @_;
	load_library($node, 'library');
	for my $index ('books', 'authors')
	{
		my $definition = slurp_file(fixture_path("$index.schema.yml"));
		$node->safe_psql('library',
			"SELECT flusso_create_index('$index', \$def\$$definition\$def\$)");
	}
	$node->safe_psql('library', 'SELECT count(*) FROM flusso_provision()');
	return $node->poll_query_until(
		'library', q{SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE backend_type = 'flusso worker' AND query = 'streaming'});
}

my @library_statements = (
	# books: new, changed, re-published, soft-deleted and back, deleted
	q{INSERT INTO books (id, isbn, title, language, publisher_id)
	  SELECT COALESCE(max(id), 0) + 1, 'isbn-' || (COALESCE(max(id), 0) + 1), 'Book ' || (COALESCE(max(id), 0) + 1),
	         (ARRAY['en', 'it', 'fr'])[1 + floor(random() * 3)::int],
	         (SELECT id FROM publishers ORDER BY random() LIMIT 1) FROM books},
	q{UPDATE books SET title = '  Title ' || floor(random() * 100) || ' ', pages = floor(random() * 500)
	  WHERE id = (SELECT id FROM books ORDER BY random() LIMIT 1)},
	q{UPDATE books SET publisher_id = (SELECT id FROM publishers ORDER BY random() LIMIT 1)
	  WHERE id = (SELECT id FROM books ORDER BY random() LIMIT 1)},
	q{UPDATE books SET withdrawn = NOT withdrawn WHERE id = (SELECT id FROM books ORDER BY random() LIMIT 1)},
	q{WITH b AS (SELECT id FROM books ORDER BY random() LIMIT 1),
	  r AS (DELETE FROM reviews WHERE book_id IN (SELECT id FROM b)),
	  l AS (DELETE FROM loans WHERE book_id IN (SELECT id FROM b)),
	  c AS (DELETE FROM "references" WHERE book_id IN (SELECT id FROM b)),
	  j AS (DELETE FROM book_authors WHERE book_id IN (SELECT id FROM b))
	  DELETE FROM books WHERE id IN (SELECT id FROM b) AND (SELECT count(*) FROM books) > 3},
	# reviews: new, moved to another book, hidden on and off, deleted
	q{INSERT INTO reviews (id, book_id, stars, body, hidden, created_at)
	  SELECT COALESCE((SELECT max(id) FROM reviews), 0) + 1, (SELECT id FROM books ORDER BY random() LIMIT 1),
	         1 + floor(random() * 5)::int, 'review', random() < 0.2, now() - random() * interval '100 days'},
	q{UPDATE reviews SET book_id = (SELECT id FROM books ORDER BY random() LIMIT 1)
	  WHERE id = (SELECT id FROM reviews ORDER BY random() LIMIT 1)},
	q{UPDATE reviews SET hidden = NOT hidden, stars = 1 + floor(random() * 5)::int
	  WHERE id = (SELECT id FROM reviews ORDER BY random() LIMIT 1)},
	q{DELETE FROM reviews WHERE id = (SELECT id FROM reviews ORDER BY random() LIMIT 1)},
	# loans: lent, returned, moved, deleted
	q{INSERT INTO loans (id, book_id, member, lent_at)
	  SELECT COALESCE((SELECT max(id) FROM loans), 0) + 1, (SELECT id FROM books ORDER BY random() LIMIT 1),
	         'member' || floor(random() * 10), now() - random() * interval '30 days'},
	q{UPDATE loans SET returned_at = CASE WHEN returned_at IS NULL THEN now() END
	  WHERE id = (SELECT id FROM loans ORDER BY random() LIMIT 1)},
	q{UPDATE loans SET book_id = (SELECT id FROM books ORDER BY random() LIMIT 1)
	  WHERE id = (SELECT id FROM loans ORDER BY random() LIMIT 1)},
	q{DELETE FROM loans WHERE id = (SELECT id FROM loans ORDER BY random() LIMIT 1)},
	# the junction, both ways
	q{INSERT INTO book_authors (book_id, author_id)
	  SELECT b.id, a.id FROM books b, authors a
	  WHERE NOT EXISTS (SELECT 1 FROM book_authors x WHERE x.book_id = b.id AND x.author_id = a.id)
	  ORDER BY random() LIMIT 1},
	q{DELETE FROM book_authors WHERE (book_id, author_id) =
	  (SELECT book_id, author_id FROM book_authors ORDER BY random() LIMIT 1)},
	# authors: far-side renames, in and out of the root filter
	q{UPDATE authors SET name = (ARRAY['Anonymous', 'Italo Calvino', 'Ursula K. Le Guin', 'Primo Levi', 'Natalia Ginzburg'])[1 + floor(random() * 5)::int]
	  WHERE id = (SELECT id FROM authors ORDER BY random() LIMIT 1)},
	q{INSERT INTO authors (id, name) SELECT max(id) + 1, 'Author ' || (max(id) + 1) FROM authors},
	# publishers: belongs_to targets renamed, added, deleted
	q{UPDATE publishers SET name = 'Publisher ' || floor(random() * 100), country = CASE WHEN random() < 0.5 THEN NULL ELSE 'XX' END
	  WHERE id = (SELECT id FROM publishers ORDER BY random() LIMIT 1)},
	q{INSERT INTO publishers (id, name) SELECT max(id) + 1, 'New press' FROM publishers},
	q{WITH p AS (SELECT id FROM publishers ORDER BY random() LIMIT 1),
	  b AS (UPDATE books SET publisher_id = NULL WHERE publisher_id IN (SELECT id FROM p))
	  DELETE FROM publishers WHERE id IN (SELECT id FROM p) AND (SELECT count(*) FROM publishers) > 2},
	# citations of a reserved-word table
	q{INSERT INTO "references" (id, book_id, "order", "desc")
	  SELECT gen_random_uuid(), (SELECT id FROM books ORDER BY random() LIMIT 1), floor(random() * 10)::int, 'cited'},
	q{UPDATE "references" SET "order" = floor(random() * 10)::int, "desc" = 'cited again'
	  WHERE id = (SELECT id FROM "references" ORDER BY random() LIMIT 1)},
	q{DELETE FROM "references" WHERE id = (SELECT id FROM "references" ORDER BY random() LIMIT 1)},
);


# The SQL of $count random statements over the library, in transactions of
# 1 to 5 statements (or all in one), after $prefix; TRUNCATE loans now and then.
sub library_workload
{
	my ($count, $prefix, $single) = @_;
	my @sql;
	my $in_txn = 0;
	for my $i (1 .. $count)
	{
		if (!$single && $in_txn == 0)
		{
			push @sql, 'BEGIN;';
			$in_txn = 1 + int(rand(5));
		}
		push @sql, $library_statements[ int(rand(@library_statements)) ] . ';';
		push @sql, 'TRUNCATE loans;' if int(rand(700)) == 0;
		if (!$single && --$in_txn == 0)
		{
			push @sql, 'COMMIT;';
		}
	}
	push @sql, 'COMMIT;' if !$single && $in_txn > 0;
	@sql = ('BEGIN;', @sql, 'COMMIT;') if $single;
	return join("\n", $prefix, @sql);
}

# Start $count random statements of library_workload over database library
# in the background, once they have begun to write; returns the IPC::Run
# handle and a reference to what psql writes to stderr.  The workload takes
# an advisory lock first and holds it to its end: it has begun once the
# lock shows in pg_locks, or once it ended (a quick one may end between two
# looks).  A row it wrote is no sign: its TRUNCATEs and DELETEs may leave
# none.
my $workload_lock = 20261202;
sub start_library_workload
{
	my ($node, $count, $name) = @_;
	my $file = "$PostgreSQL::Test::Utils::tmp_check/$name.sql";
	PostgreSQL::Test::Utils::append_to_file($file,
		library_workload($count, "SELECT pg_advisory_lock($workload_lock);", 0));
	my ($out, $err) = ('', '');
	my $workload = IPC::Run::start(
		[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('library'), '-f', $file ],
		'>', \$out, '2>', \$err);
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		return ($workload, \$err) unless $workload->pumpable;
		return ($workload, \$err)
		  if $node->safe_psql('library', qq{SELECT count(*) > 0 FROM pg_catalog.pg_locks
				WHERE locktype = 'advisory' AND objid = $workload_lock AND granted}) eq 't';
		select(undef, undef, undef, 0.1);
		$workload->pump_nb;
	}
	die 'the workload does not start';
}

# Poll until the worker of database $db has confirmed the current WAL
# position and every index is live.
sub database_caught_up
{
	my ($node, $db) = @_;
	# the insert position: with synchronous_commit off, commits may not be
	# written yet, and pg_current_wal_lsn() is the write position
	my $lsn = $node->safe_psql($db, 'SELECT pg_current_wal_insert_lsn()');
	return $node->poll_query_until(
		$db, qq{SELECT (SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots
		  WHERE slot_name LIKE 'flusso_%' AND database = current_database())
		  AND (SELECT bool_and(phase = 'live') FROM flusso_status())});
}

# The same for database library.
sub library_caught_up
{
	my ($node) = @_;
	return database_caught_up($node, 'library');
}

# Database $db with flusso and the things index: 50 rows of (id, label),
# label indexed as required text, the publication provisioned.
sub things_database
{
	my ($node, $db) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, q{
CREATE EXTENSION flusso;
CREATE TABLE things (id int PRIMARY KEY, label text NOT NULL);
INSERT INTO things SELECT g, 'thing ' || g FROM generate_series(1, 50) g;
SELECT flusso_create_index('things', $$
version: 1
table: things
primary_key: id
fields:
  - text: label
    required: true
$$);
SELECT count(*) FROM flusso_provision();
});
}

# Poll $check (a sub) every 100 ms until it returns true, for at most
# $PostgreSQL::Test::Utils::timeout_default seconds; whether it did.
sub poll_until
{
	my ($check) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (time() < $deadline)
	{
		return 1 if $check->();
		select(undef, undef, undef, 0.1);
	}
	return 0;
}

# Has this build the test-only setting $setting (FLUSSO_TEST_HOOKS)?
sub has_test_hook
{
	my ($node, $db, $setting) = @_;
	return $node->safe_psql($db,
		"SELECT count(*) FROM pg_settings WHERE name = '$setting'") eq '1';
}

# Arm a crash hook: point the test-only setting $setting at a file in the
# data directory, reload, and create the file, whose path is returned.
sub arm_crash_file
{
	my ($node, $db, $setting, $name) = @_;
	my $crash_file = $node->data_dir . "/$name";
	$node->safe_psql($db, "ALTER SYSTEM SET $setting = '$crash_file'");
	$node->reload;
	open(my $fh, '>', $crash_file) or die "could not create $crash_file: $!";
	close($fh);
	return $crash_file;
}

1;

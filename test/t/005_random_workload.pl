# A random workload over every table of the library fixture — child
# deletes, re-parenting, soft delete on and off, rows entering and leaving
# filters, many_to_many far-side renames, belongs_to targets changed and
# deleted, multi-statement transactions, TRUNCATE — then, once the worker
# has caught up, every stored document equals a fresh build.  Run three
# ways: transactions of a few statements, the same with synchronous_commit
# off, and one large transaction.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('workload');
ok(streaming_library($node), 'the library indexes are defined and the worker streams');

# Seeding is a later piece: touch every root row so that every document is
# built through the live path before the workload starts.
$node->safe_psql('library', 'UPDATE books SET title = title; UPDATE authors SET name = name');

my @statements = (
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

srand(20261129);

# $count statements in transactions of 1 to 5, or all in one transaction
sub workload
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
		push @sql, $statements[ int(rand(@statements)) ] . ';';
		push @sql, 'TRUNCATE loans;' if int(rand(700)) == 0;
		if (!$single && --$in_txn == 0)
		{
			push @sql, 'COMMIT;';
		}
	}
	push @sql, 'COMMIT;' if !$single && $in_txn > 0;
	@sql = ('BEGIN;', @sql, 'COMMIT;') if $single;
	$node->safe_psql('library', join("\n", $prefix, @sql));
}

sub caught_up_and_verified
{
	my ($name) = @_;
	my $lsn = $node->safe_psql('library', 'SELECT pg_current_wal_lsn()');
	ok( $node->poll_query_until(
			'library',
			"SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name LIKE 'flusso_%'"),
		"$name: the worker caught up");
	for my $index ('books', 'authors')
	{
		is( $node->safe_psql('library',
				"SELECT string_agg(id || ' ' || problem, ', ') FROM flusso_verify('$index')"),
			'', "$name: every $index document equals a fresh build");
	}
}

caught_up_and_verified('before the workload');
workload(2000, '', 0);
caught_up_and_verified('2000 statements in short transactions');
workload(500, 'SET synchronous_commit = off;', 0);
caught_up_and_verified('500 more with synchronous_commit off');
workload(500, '', 1);
caught_up_and_verified('500 more in one transaction');

is($node->safe_psql('library', q{SELECT last_error IS NULL FROM flusso_status() LIMIT 1}),
	't', 'no error on the way');
cmp_ok($node->safe_psql('library', q{SELECT changes_captured FROM flusso_status() LIMIT 1}),
	'>', 2000, 'after more than 2000 captured changes');
is( $node->safe_psql('library',
		q{SELECT (SELECT count(*) FROM flusso_docs.books) = (SELECT count(*) FROM books WHERE NOT withdrawn)}),
	't', 'one document per book that is not withdrawn');

done_testing();

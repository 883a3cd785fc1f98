# Live changes reach the documents: every change committed after an index
# is defined rebuilds exactly the documents it affects — the root row, the
# old and the new parent of a moved child, every referrer of a belongs_to
# target, both sides of a junction — and a document that builds nothing
# is deleted.  The seeded documents are deleted first, so that what each
# change rebuilds shows.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('documents');
ok(streaming_library($node), 'the library indexes are defined and the worker streams');
ok(library_caught_up($node), 'and seeded');
is($node->safe_psql('library', q{SELECT string_agg(id, ',' ORDER BY id) FROM flusso_docs.books}), '1,2,3,4',
	'a document for every book');
$node->safe_psql('library', q{DELETE FROM flusso_docs.books; DELETE FROM flusso_docs.authors});

# After each change: exactly these documents are stored, each equal to a
# fresh build.
sub documents_are
{
	my ($index, $ids, $name) = @_;
	my $list = join(',', map { "'$_'" } @$ids);
	my $expected = join(',', sort @$ids);
	ok( $node->poll_query_until(
			'library', qq{SELECT string_agg(id, ',' ORDER BY id) = '$expected'
			  AND bool_and(doc = flusso_build('$index', id))
			  FROM flusso_docs.$index}),
		$name);
}

$node->safe_psql('library', q{UPDATE books SET title = 'Il sistema periodico (1975)' WHERE id = 2});
documents_are('books', ['2'], 'a root row change builds its document');

$node->safe_psql('library', q{UPDATE reviews SET book_id = 3 WHERE id = 1});
documents_are('books', ['1', '2', '3'], 'a review moved to another book rebuilds the old and the new book');
is($node->safe_psql('library', q{SELECT doc->>'reviewCount' FROM flusso_docs.books WHERE id = '1'}),
	'1', 'the old parent lost the review');

$node->safe_psql('library', q{DELETE FROM reviews WHERE id = 4});
documents_are('books', ['1', '2', '3'], 'deleting a child rebuilds its parent');
is($node->safe_psql('library', q{SELECT doc->'reviews' FROM flusso_docs.books WHERE id = '2'}),
	'[]', 'the deleted review is gone from its book');

$node->safe_psql('library', q{UPDATE books SET publisher_id = 3 WHERE id = 4});
$node->safe_psql('library', q{UPDATE publishers SET name = 'Penguin Books' WHERE id = 1});
documents_are('books', ['1', '2', '3', '4'], 'renaming a publisher rebuilds every book that belongs to it');

$node->safe_psql('library', q{DELETE FROM book_authors WHERE book_id = 4 AND author_id = 4});
$node->safe_psql('library', q{UPDATE authors SET name = 'Primo Michele Levi' WHERE id = 3});
# books are the far side of the authors' many_to_many, and publishers are
# read below them: the changes above already rebuilt authors 1, 2 and 3
documents_are('authors', ['1', '2', '3'], 'a junction row and an author rename rebuild the authors');
documents_are('books', ['1', '2', '3', '4'], 'and every book of the renamed author');
is($node->safe_psql('library', q{SELECT doc->'authors'->0->>'name' FROM flusso_docs.books WHERE id = '2'}),
	'primo michele levi', 'the far side of a many_to_many is current');

$node->safe_psql('library', q{BEGIN; UPDATE books SET withdrawn = true WHERE id = 1;
	UPDATE loans SET returned_at = now() WHERE id = 3; COMMIT});
documents_are('books', ['2', '3', '4'], 'a soft-deleted book is deleted, in a multi-statement transaction');

$node->safe_psql('library', q{UPDATE authors SET name = 'Anonymous' WHERE id = 1});
documents_are('authors', ['2', '3'], 'an author leaving the root filter is deleted');

$node->safe_psql('library', q{TRUNCATE loans});
documents_are('books', ['2', '3', '4'], 'truncating a related table rebuilds every book');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_docs.books WHERE doc->'currentLoan' <> 'null'}),
	'0', 'with no current loan left');

# flusso_search ranks documents by their text and identifier fields,
# nested ones included (the lower-cased author names of books).
is( $node->safe_psql('library',
		q{SELECT string_agg(id, ',' ORDER BY rank DESC, id) FROM flusso_search('books', 'levi')}),
	'2', 'flusso_search finds a book by its author');
is( $node->safe_psql('library',
		q{SELECT string_agg(id, ',' ORDER BY id) FROM flusso_search('books', 'darkness OR periodico')}),
	'2,3', 'and takes web-search syntax');

# flusso_verify compares every stored document with a fresh build.  (The
# truncate above changed no document, so wait until it is applied: its
# rebuild would repair what is tampered with below.)
ok(library_caught_up($node), 'the worker has applied every change');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('books')}),
	'0', 'flusso_verify finds the books index in order');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('authors')}),
	'0', 'and the authors index');
$node->safe_psql('library', q{
	UPDATE flusso_docs.books SET doc = '{}' WHERE id = '2';
	DELETE FROM flusso_docs.books WHERE id = '3';
	INSERT INTO flusso_docs.books (id, doc) VALUES ('1', '{}');
});
is( $node->safe_psql('library',
		q{SELECT string_agg(id || ' ' || problem, ', ' ORDER BY id) FROM flusso_verify('books')}),
	'1 extra, 2 different, 3 missing',
	'and reports what is extra, different and missing');

# Isolation: an index whose build fails goes to phase error with the
# reason, the others go on and the slot keeps moving; once it builds again
# it is seeded again, which also repairs what was tampered with above.
$node->safe_psql('library', q{ALTER TABLE reviews RENAME COLUMN hidden TO concealed});
$node->safe_psql('library', q{
	UPDATE books SET title = 'Built after the repair' WHERE id = 2;
	UPDATE authors SET name = 'Primo Levi, chemist' WHERE id = 3;
});
ok( $node->poll_query_until(
		'library', q{SELECT phase = 'error' AND last_error LIKE '%hidden%' FROM flusso_status() WHERE index = 'books'}),
	'the books index is in phase error with the reason');
ok( $node->poll_query_until(
		'library', q{SELECT doc->>'name' = 'Primo Levi, chemist' FROM flusso_docs.authors WHERE id = '3'}),
	'the authors index goes on');
my $lsn = $node->safe_psql('library', 'SELECT pg_current_wal_insert_lsn()');
ok( $node->poll_query_until(
		'library', "SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name LIKE 'flusso_%'"),
	'and the slot keeps moving');
is($node->safe_psql('library', q{SELECT phase FROM flusso_status() WHERE index = 'authors'}),
	'live', 'the authors index stays live');
is($node->safe_psql('library', q{SELECT needs_seed FROM flusso.index WHERE name = 'books'}),
	't', 'the books index is marked for seeding');
$node->safe_psql('library', q{ALTER TABLE reviews RENAME COLUMN concealed TO hidden});
ok( $node->poll_query_until(
		'library', q{SELECT phase = 'live' AND NOT (SELECT needs_seed FROM flusso.index WHERE name = 'books')
		  FROM flusso_status() WHERE index = 'books'}),
	'once it builds again, the books index is seeded and live');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('books')}),
	'0', 'every book document equals a fresh build, the tampered ones too');
is($node->safe_psql('library', q{SELECT doc->>'title' FROM flusso_docs.books WHERE id = '2'}),
	'Built after the repair', 'the change made while it was in error is there');

done_testing();

# Documents written in OpenSearch behind flusso's back.  One overwritten
# at a version above any flusso gives: the next real change gets a 409,
# which is not taken as done: the document is rejected, saying why,
# flusso_status() counts it, flusso_wait() says false with a NOTICE, and
# flusso_verify() finds it different.  flusso_verify(repair => true) puts
# flusso's document back, with one deleted behind its back and one added
# that builds nothing; afterwards every document verifies, nothing is
# rejected, and waits say true again.  Repairing takes the owner's rights.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available();

my $os = OpenSearchNode->start('foreign');
my $node = flusso_node('foreign');
ok(streaming_library($node), 'the library streams');
my $url = $os->url;
$node->safe_psql('library', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$url', index_prefix 'f-')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('books', ARRAY['search'])});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'books: seeded into OpenSearch');
my ($concrete) = @{ $os->alias_targets('f-books') };
my @ids = split /\n/, $node->safe_psql('library', 'SELECT id FROM books WHERE NOT withdrawn ORDER BY id LIMIT 3');
my ($planted, $deleted) = @ids;

# Overwritten at a version above any flusso gives, then changed for real.
my ($status) = $os->request('PUT', "/$concrete/_doc/$planted?version=9000000000000000000&version_type=external&refresh=true",
	'{"title": "planted"}');
is($status, 200, 'a document is overwritten behind flusso\'s back, at a higher version');
$node->safe_psql('library', "UPDATE books SET title = 'the real title' WHERE id = $planted");
my ($rc, $out, $err) = $node->psql('library', q{SELECT flusso_wait('books', '10s')});
is($out, 'f', 'the next real change gets a 409: flusso_wait() does not say true');
like($err, qr/NOTICE:  index "books" cannot be waited for now/, 'with a NOTICE');
ok($node->poll_query_until('library', q{SELECT rejected = 1 FROM flusso_status() WHERE index = 'books'}),
	'flusso_status() counts the document rejected');
like( $node->safe_psql('library', qq{SELECT status || ' ' || error_type || ': ' || reason FROM flusso_rejected('books') WHERE id = '$planted'}),
	qr/^409 version_conflict_engine_exception: OpenSearch holds version 9000000000000000000 of the document, above any version flusso gives \(the WAL is at [0-9A-F]+\/[0-9A-F]+\): something else wrote it, and no later change can overwrite it; flusso_verify\(\) with repair => true puts flusso's document back$/,
	'flusso_rejected() says why');
is($node->safe_psql('library', q{SELECT string_agg(id || ' ' || problem || ' ' || sink, ', ') FROM flusso_verify('books')}),
	"$planted different opensearch", 'flusso_verify() finds it different');

# Another one deleted, and one added that builds nothing.
($status) = $os->request('DELETE', "/$concrete/_doc/$deleted?refresh=true");
is($status, 200, 'a document is deleted behind flusso\'s back');
($status) = $os->request('PUT', "/$concrete/_doc/no-such-book?version=5&version_type=external&refresh=true",
	'{"title": "added"}');
is($status, 201, 'and one added that builds nothing');

# Repairing takes the owner's rights.
$node->safe_psql('library', q{CREATE ROLE reader LOGIN IN ROLE flusso_admin; GRANT SELECT ON flusso_docs.books TO reader});
($rc, $out, $err) = $node->psql('library', q{SELECT count(*) FROM flusso_verify('books', repair => true)},
	extra_params => [ '-U', 'reader' ]);
like($err, qr/ERROR:  must be owner of index "books"/, 'a reader may verify, not repair');

is( $node->safe_psql('library', q{SELECT string_agg(id || ': ' || problem, E'\n' ORDER BY id) FROM flusso_verify('books', repair => true)}),
	join("\n", sort { $a cmp $b } (
		"$planted: different, repaired at version 9000000000000000000, which something else gave it, above any flusso gives: its later changes cannot overwrite it until flusso_resnapshot() seeds a new generation",
		"$deleted: missing, repaired",
		'no-such-book: extra, repaired')),
	'flusso_verify(repair => true) puts each right, and says how');
my (undef, $doc) = $os->request('GET', "/$concrete/_doc/$planted");
is($doc->{_source}{title}, 'the real title', 'the overwritten document is flusso\'s again');
(undef, $doc) = $os->request('GET', "/$concrete/_doc/$deleted");
ok($doc->{found}, 'the deleted one is back');
(undef, $doc) = $os->request('GET', "/$concrete/_doc/no-such-book");
ok(!$doc->{found}, 'the added one is gone');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('books')}), '0', 'every document verifies');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_rejected('books')}), '0', 'nothing is rejected');

# A later change of a document flusso did not lose: waited for, found.
my $other = $ids[2];
$node->safe_psql('library', "UPDATE books SET title = 'changed after the repair' WHERE id = $other");
# (the shipper says what holds waits back at its next pass)
ok(poll_until(sub { $node->safe_psql('library', q{SELECT flusso_wait('books', '30s')}) eq 't' }),
	'waits say true again');
(undef, $doc) = $os->request('GET', "/$concrete/_doc/$other");
is($doc->{_source}{title}, 'changed after the repair', 'and are borne out');

$node->stop;
done_testing();

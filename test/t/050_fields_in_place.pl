# A definition that only gains fields is taken in place: the OpenSearch
# index that serves maps the new fields (at the top and inside a join),
# and every document is rebuilt where it is served, with no seed and no
# new generation, while a client counting the alias always finds every
# document; the table sink's documents gain them too, and both equal a
# fresh build.  An OpenSearch index that cannot map a field (mapped
# otherwise by hand) stops the index's shipping, said in flusso_status(),
# until flusso_resnapshot() seeds a new one.  A field retyped still takes
# a new generation.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FlussoTest;
use OpenSearchNode;

my $os = OpenSearchNode->start('in_place');
my $node = flusso_node('in_place');
ok(streaming_library($node), 'the library streams');

my $url = $os->url;
$node->safe_psql('library', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$url', index_prefix 'ip-')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('books', ARRAY['table', 'search'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'books: seeded into OpenSearch');
my $concrete = $node->safe_psql('library', q{SELECT concrete FROM flusso.opensearch_generation WHERE index_name = 'books'});
my $expected = $node->safe_psql('library', q{SELECT count(*) FROM flusso_docs.books});
my $books = slurp_file(fixture_path('books.schema.yml'));

sub seeds_logged
{
	return scalar(() = slurp_file($node->logfile) =~ /flusso: seeding index "books"/g);
}

sub replace
{
	my ($definition) = @_;
	my ($ret, $out, $err) = $node->psql('library',
		"SELECT flusso_create_index('books', \$def\$$definition\$def\$, replace => true)");
	die "replace failed: $err" if $ret != 0;
	return $err;
}

# documents of the alias holding a field, found by an exists query
sub holding
{
	my ($field) = @_;
	$os->request('POST', '/ip-books/_refresh');
	my ($status, $body) = $os->request('POST', '/ip-books/_count',
		qq({"query": {"exists": {"field": "$field"}}}));
	return $status == 200 ? $body->{count} : "HTTP $status";
}

# 1. fields added at the top and inside a join, in place
my $seeds = seeds_logged();
(my $added = $books) =~ s/^fields:\n/fields:\n  - keyword: isbnCode\n    column: isbn\n    required: true\n/m;
$added =~ s/(      - identifier: name\n        required: true\n        transforms: \[lowercase\]\n)/$1      - date: born\n        required: false\n/;
like(replace($added), qr/NOTICE:  index "books" gains fields in place/, 'the new definition is taken in place');
my ($polls, $bad) = (0, 0);
my $deadline = time + 120;
while (time < $deadline)
{
	my ($status, $body) = $os->request('GET', '/ip-books/_count');
	$polls++;
	$bad++ if $status != 200 || $body->{count} != $expected;
	last if holding('isbnCode') eq $expected;
	usleep(10_000);
}
is(holding('isbnCode'), $expected, 'every document in OpenSearch gains the field');
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'caught up');
is($bad, 0, "no count of the alias failed or differed from the documents table ($polls counts)");
my $documents = $os->documents('ip-books');
is(scalar(grep { my $d = $_; grep { exists $_->{born} } @{ $d->{authors} // [] } } values %$documents),
	$node->safe_psql('library', q{SELECT count(DISTINCT ba.book_id) FROM book_authors ba
		  JOIN books b ON b.id = ba.book_id WHERE NOT b.withdrawn}),
	'and the one inside the join, in every author');
my (undef, $mapping) = $os->request('GET', "/$concrete/_mapping");
my $properties = $mapping->{$concrete}{mappings}{properties};
is($properties->{isbnCode}{type} . ' ' . $properties->{authors}{properties}{born}{type}, 'keyword date',
	'the served index maps both');
ok(defined $mapping->{$concrete}{mappings}{_meta}{flusso}, 'its owner record is kept');
is($node->safe_psql('library', q{SELECT string_agg(concrete || ' ' || state || ' ' || remap, ', ')
	FROM flusso.opensearch_generation WHERE index_name = 'books'}),
	"$concrete served false", 'the same generation serves, and no other was begun');
is(seeds_logged(), $seeds, 'no seed ran');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_docs.books WHERE doc ? 'isbnCode'}), $expected,
	'the table sink\'s documents gain it');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('books')}), '0',
	'every document equals a fresh build');
$node->safe_psql('library', q{UPDATE books SET isbn = 'isbn-in-place' WHERE id = (SELECT min(id) FROM books WHERE NOT withdrawn)});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'a change of the new field ships');
my $id = $node->safe_psql('library', q{SELECT min(id) FROM books WHERE NOT withdrawn});
my (undef, $doc) = $os->request('GET', "/ip-books/_doc/$id");
is($doc->{_source}{isbnCode}, 'isbn-in-place', 'and OpenSearch has it');

# 2. a field the served index maps otherwise (by hand): it cannot hold the
# new documents, so the index is seeded again into a new one; the one
# served misses changes meanwhile, and nothing is rejected
my ($status) = $os->request('PUT', "/$concrete/_mapping", '{"properties": {"langCode": {"type": "integer"}}}');
is($status, 200, 'langCode mapped as an integer by hand');
(my $conflicting = $added) =~ s/^fields:\n/fields:\n  - keyword: langCode\n    column: language\n    required: true\n/m;
like(replace($conflicting), qr/gains fields in place/, 'the definition gaining langCode is taken in place');
ok( poll_until(sub {
			slurp_file($node->logfile) =~ /WARNING:  flusso index "books": OpenSearch index "\Q$concrete\E" refused the mapping of the fields added to index "books": .*HTTP 400.*; the index is seeded again into a new OpenSearch index, and the one served misses changes until it is replaced/
		}),
	'the refusal is logged as a WARNING, with what follows');
$node->safe_psql('library', q{UPDATE books SET pages = 777 WHERE id = (SELECT min(id) FROM books WHERE NOT withdrawn)});
ok($node->poll_query_until('library', qq{SELECT EXISTS (SELECT FROM flusso.opensearch_generation
	WHERE index_name = 'books' AND concrete <> '$concrete' AND state = 'served')}), 'a new OpenSearch index serves');
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'caught up after it');
is(holding('langCode'), $expected, 'which maps the field, in every document');
(undef, $doc) = $os->request('GET', "/ip-books/_doc/$id");
is($doc->{_source}{pages}, 777, 'and has the change made meanwhile');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_rejected('books')}), '0', 'nothing was rejected');
is_deeply($os->indexes_like('ip-books'), $os->alias_targets('ip-books'), 'the old one is gone');

# 3. a field retyped: a new generation
my $served = $node->safe_psql('library', q{SELECT concrete FROM flusso.opensearch_generation WHERE index_name = 'books'});
(my $retyped = $conflicting) =~ s/  - keyword: isbnCode\n/  - text: isbnCode\n/;
unlike(replace($retyped), qr/in place/, 'a retyped field is not taken in place');
ok($node->poll_query_until('library', qq{SELECT EXISTS (SELECT FROM flusso.opensearch_generation
	WHERE index_name = 'books' AND concrete <> '$served' AND state = 'served')}), 'a new generation serves');
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'caught up');
my $next = $node->safe_psql('library', q{SELECT concrete FROM flusso.opensearch_generation WHERE index_name = 'books'});
(undef, $mapping) = $os->request('GET', "/$next/_mapping");
is($mapping->{$next}{mappings}{properties}{isbnCode}{type}, 'text', 'which maps it as text');
is($os->count('ip-books'), $expected, 'with every document');

$node->stop;
done_testing();

# The OpenSearch sink against a real OpenSearch node: every construct of
# the library fixture seeded and then synced live, compared document by
# document with flusso_build(); versions are commit LSNs; a root TRUNCATE
# empties the index; a rejection is quarantined while the rest flows and
# retried once the row is fixed, or stops its index alone (on_error
# 'stop'); a new generation is rolled in while a client counts the alias
# and never sees an error or a drop; dropping an index deletes its
# OpenSearch indexes, or keeps them.

use strict;
use warnings;

use JSON::PP;
use Time::HiRes qw(usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available();

my $os = OpenSearchNode->start('sync');
my $node = flusso_node('opensearch');
ok(streaming_library($node), 'the library streams');

my $url = $os->url;
$node->safe_psql('library', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$url', index_prefix 't-')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('books', ARRAY['table', 'search'], '{"replicas": 0}')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('authors', ARRAY['search'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'books: seeded into OpenSearch');
ok(OpenSearchNode::caught_up($node, 'library', 'authors'), 'authors: seeded into OpenSearch');
my $concrete = $node->safe_psql('library',
	q{SELECT concrete FROM flusso.opensearch_generation WHERE index_name = 'books'});
like($concrete, qr/^t-books-g\d+-[0-9a-f]{8}$/, 'a generation is named <prefix><index>-g<generation>-<random>');
is_deeply($os->alias_targets('t-books'), [$concrete], 'the alias serves the generation the catalog says');

my $books_ids = 'SELECT id::text FROM books';
my $authors_ids = 'SELECT id::text FROM authors';
is_deeply($os->differences($node, 'library', 'books', 't-books', $books_ids), [],
	'books: every seeded document equals flusso_build()');
is_deeply($os->differences($node, 'library', 'authors', 't-authors', $authors_ids), [],
	'authors: every seeded document equals flusso_build()');
my ($distribution, $version) = ($os->distribution, $os->version);
is($node->safe_psql('library', qq{SELECT count(*) FROM flusso_check()
	WHERE path = 'sinks.opensearch' AND severity = 'info' AND message LIKE '%answers: $distribution $version'}),
	'2', 'flusso_check() sees the cluster, and it accepts both mappings');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_check() WHERE path = 'sinks.opensearch'
	AND severity <> 'info'}), '0', 'flusso_check() finds nothing wrong');

# Live: a random workload over every table, with TRUNCATE loans now and then.
srand(1011);
my ($workload, $err) = start_library_workload($node, 1500, 'os_live');
$workload->finish;
is($$err, '', 'the workload ran without error');
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'books: caught up');
ok(OpenSearchNode::caught_up($node, 'library', 'authors'), 'authors: caught up');
is_deeply($os->differences($node, 'library', 'books', 't-books', $books_ids), [],
	'books: every document equals flusso_build() after the workload');
is_deeply($os->differences($node, 'library', 'authors', 't-authors', $authors_ids), [],
	'authors: every document equals flusso_build() after the workload');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('books')})
	  + $node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('authors')}),
	0, 'flusso_verify() agrees, for both sinks');
is($node->safe_psql('library', q{SELECT shipped > 0 AND rejected = 0 AND ship_pending = 0
	AND ship_oldest_seconds IS NULL FROM flusso_status() WHERE index = 'books'}),
	't', 'flusso_status() counts what was shipped, nothing pending or rejected');

# Versions: a document carries the commit LSN of the change that rebuilt it.
my $before = $node->safe_psql('library', q{SELECT pg_current_wal_insert_lsn() - '0/0'});
$node->safe_psql('library', q{UPDATE books SET pages = 999 WHERE id = (SELECT min(id) FROM books WHERE NOT withdrawn)});
my $after = $node->safe_psql('library', q{SELECT pg_current_wal_insert_lsn() - '0/0'});
my $id = $node->safe_psql('library', q{SELECT min(id) FROM books WHERE NOT withdrawn});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'the update is shipped');
my (undef, $doc) = $os->request('GET', "/t-books/_doc/$id");
is($doc->{_source}{pages}, 999, 'the document has the update');
ok($doc->{_version} > $before && $doc->{_version} <= $after,
	"its version is the commit LSN of the update's batch ($before < $doc->{_version} <= $after)");

# A root TRUNCATE empties every generation before what follows is shipped.
$node->safe_psql('library', q{CREATE TABLE gadgets (id int PRIMARY KEY, name text NOT NULL, addr text)});
$node->safe_psql('library', q{INSERT INTO gadgets SELECT g, 'gadget ' || g, '10.0.0.' || g FROM generate_series(1, 20) g});
$node->safe_psql('library', q{SELECT flusso_create_index('gadgets', $$
version: 1
table: gadgets
primary_key: id
fields:
  - integer: id
    required: true
  - text: name
    required: true
  - custom: addr
    postgres: [text]
    opensearch: ip
    required: false
$$)});
$node->safe_psql('library', q{SELECT count(*) FROM flusso_provision()});
$node->safe_psql('library', q{SELECT flusso_set_sinks('gadgets', ARRAY['search'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'library', 'gadgets'), 'gadgets: seeded');
is($os->count('t-gadgets'), 20, 'gadgets: 20 documents');
$node->safe_psql('library', q{BEGIN; TRUNCATE gadgets; INSERT INTO gadgets VALUES (7, 'seven', '10.0.0.7'); COMMIT;});
ok(OpenSearchNode::caught_up($node, 'library', 'gadgets'), 'the truncate is shipped');
is_deeply([ sort keys %{ $os->documents('t-gadgets') } ], ['7'],
	'the truncate emptied the index; the row inserted after it is there');

# Rejections: quarantined, the rest flows, retried once the row is fixed.
$node->safe_psql('library', q{INSERT INTO gadgets SELECT g, 'gadget ' || g, CASE WHEN g = 30 THEN 'not an address' ELSE '10.0.1.' || g END
	FROM generate_series(21, 40) g});
ok( $node->poll_query_until('library', q{SELECT rejected = 1 AND ship_pending = 0 FROM flusso_status() WHERE index = 'gadgets'}),
	'the document OpenSearch refuses is rejected');
# (Elasticsearch names the error document_parsing_exception)
my $parsing = OpenSearchNode::is_elasticsearch() ? 'document_parsing_exception' : 'mapper_parsing_exception';
is($node->safe_psql('library', q{SELECT id || ' ' || status || ' ' || error_type FROM flusso_rejected('gadgets')}),
	"30 400 $parsing", 'flusso_rejected() says which and why');
is($os->count('t-gadgets'), 20, 'the other 19 documents flowed');
like($node->safe_psql('library', q{SELECT ship_error FROM flusso_status() WHERE index = 'gadgets'}),
	qr/OpenSearch rejected 1 documents \($parsing\)/, 'flusso_status() says so, without the value');
unlike($node->safe_psql('library', q{SELECT ship_error FROM flusso_status() WHERE index = 'gadgets'}),
	qr/not an address/, 'the rejected value is not shown in flusso_status()');
is($node->safe_psql('library', q{SELECT phase FROM flusso_status() WHERE index = 'gadgets'}), 'live',
	'the index stays live');
$node->safe_psql('library', q{UPDATE gadgets SET addr = '10.0.1.30' WHERE id = 30});
is($node->safe_psql('library', q{SELECT flusso_retry_rejected('gadgets')}), '1', 'one document to retry');
ok($node->poll_query_until('library', q{SELECT rejected = 0 FROM flusso_status() WHERE index = 'gadgets'}),
	'the retry empties the quarantine');
ok(OpenSearchNode::caught_up($node, 'library', 'gadgets'), 'and is shipped');
is($os->count('t-gadgets'), 21, 'the fixed document is there');

# on_error 'stop': the index alone stops; the others go on.
$node->safe_psql('library', q{SELECT flusso_set_sinks('gadgets', ARRAY['search'], '{"replicas": 0, "on_error": "stop"}')});
ok(OpenSearchNode::caught_up($node, 'library', 'gadgets'), 'on_error changed without a new seed');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso.opensearch_generation WHERE index_name = 'gadgets'}),
	'1', 'still one generation');
$node->safe_psql('library', q{UPDATE gadgets SET addr = 'bad' WHERE id = 21});
ok($node->poll_query_until('library', q{SELECT phase = 'error' AND ship_error LIKE '%shipping stopped%'
	FROM flusso_status() WHERE index = 'gadgets'}), 'on_error stop: the index is in error');
$node->safe_psql('library', q{INSERT INTO gadgets VALUES (50, 'fifty', '10.0.0.50')});
$node->safe_psql('library', q{UPDATE books SET pages = 1000 WHERE id = } . $id);
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'books go on');
(undef, $doc) = $os->request('GET', "/t-books/_doc/$id");
is($doc->{_source}{pages}, 1000, 'books: the change arrived while gadgets is stopped');
is($node->safe_psql('library', q{SELECT ship_pending FROM flusso_status() WHERE index = 'gadgets'}), '1',
	'gadgets: what changed since waits, nothing lost');
$node->safe_psql('library', q{UPDATE gadgets SET addr = '10.0.1.21' WHERE id = 21});
$node->safe_psql('library', q{SELECT flusso_retry_rejected('gadgets')});
ok(OpenSearchNode::caught_up($node, 'library', 'gadgets'), 'after the retry, gadgets ships again');
is_deeply($os->differences($node, 'library', 'gadgets', 't-gadgets', 'SELECT id::text FROM gadgets'), [],
	'gadgets: every document equals flusso_build()');

# A definition change that does more than add fields (here title is no
# longer trimmed) rolls in a new generation while a client counts the
# alias: it never sees an error, nor a count other than the table's.
my $expected = $node->safe_psql('library', q{SELECT count(*) FROM flusso_docs.books});
my $old = $node->safe_psql('library', q{SELECT concrete FROM flusso.opensearch_generation WHERE index_name = 'books'});
my $definition = slurp_file(fixture_path('books.schema.yml')) . "  - integer: shelf\n    column: pages\n    required: false\n";
$definition =~ s/    transforms: \[trim\]\n// or die 'the fixture trims title no more';
$node->safe_psql('library', "SELECT flusso_create_index('books', \$def\$$definition\$def\$, replace => true)");
my ($polls, $bad, $after_swap) = (0, 0, 0);
my $deadline = time + 60;
while (time < $deadline && $after_swap < 20)
{
	my ($status, $body) = $os->request('GET', '/t-books/_count');
	$polls++;
	$bad++ if $status != 200 || $body->{count} != $expected;
	my $targets = $os->alias_targets('t-books');
	$after_swap++ if @$targets == 1 && $targets->[0] ne $old;
	usleep(10_000);
}
cmp_ok($after_swap, '==', 20, "the alias moved to the new generation ($polls counts, 20 after the move)");
is($bad, 0, 'no count failed or differed from the documents table');
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'the new generation is served, the old one deleted');
is_deeply($os->indexes_like('t-books'), $os->alias_targets('t-books'), 'only the served generation is left');
is_deeply($os->differences($node, 'library', 'books', 't-books', $books_ids), [],
	'books: the new generation equals flusso_build()');
is(scalar(grep { !exists $_->{shelf} } values %{ $os->documents('t-books') }), 0,
	'every document has the new field');

# Dropping indexes: deleted in OpenSearch, or kept.
$node->safe_psql('library', q{SELECT flusso_drop_index('authors')});
ok($node->poll_query_until('library', q{SELECT count(*) = 0 FROM flusso.opensearch_generation WHERE index_name = 'authors'}),
	'the dropped index has no generation left');
is_deeply($os->indexes_like('t-authors'), [], 'its OpenSearch index is deleted');
$node->safe_psql('library', q{SELECT flusso_drop_index('gadgets', keep_opensearch => true)});
# the shipper forgets a kept generation once it has left it as it is
ok($node->poll_query_until('library', q{SELECT count(*) = 0 FROM flusso.opensearch_generation WHERE index_name = 'gadgets'}),
	'the kept index has no generation left');
is(scalar @{ $os->indexes_like('t-gadgets') }, 1, 'kept: its OpenSearch index is left as it was');
is($os->count('t-gadgets'), 22, 'with its documents, behind its alias');

# Sinks changed while the worker restarts to seed the ones before: the
# change holds the index's row, the seed's start waits for it and then
# sees the sinks it was compiled with are gone, so no generation is left
# behind for an OpenSearch sink the index no longer has.
$node->safe_psql('library', q{SELECT flusso_create_index('shelves',
	'{"version": 1, "table": "books", "fields": [{"keyword": "title", "required": true}]}')});
ok($node->poll_query_until('library', q{SELECT NOT needs_seed FROM flusso.index WHERE name = 'shelves'}),
	'shelves: seeded into its table');
$node->safe_psql('library', q{
	SELECT flusso_set_sinks('shelves', ARRAY['search'], '{"replicas": 0}');
	BEGIN;
	SELECT flusso_set_sinks('shelves', ARRAY['table']);
	SELECT pg_sleep(2);
	COMMIT;});
ok($node->poll_query_until('library', q{SELECT NOT needs_seed FROM flusso.index WHERE name = 'shelves'}),
	'shelves: seeded again into its table alone');
ok(library_caught_up($node), 'and caught up');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso.opensearch_generation
	WHERE index_name = 'shelves' AND state <> 'retired'}),
	'0', 'no generation is left for the OpenSearch sink that was removed');
ok($node->poll_query_until('library', q{SELECT count(*) = 0 FROM flusso.opensearch_generation
	WHERE index_name = 'shelves'}), 'and the shipper deleted what was retired');
is_deeply($os->indexes_like('t-shelves'), [], 'nothing of it is left in OpenSearch');

# A field type of the other engine: flusso_check() has the cluster refuse
# the mapping, names the engine's own counterpart, and leaves nothing in
# the cluster; with the counterpart the mapping is accepted and ships.
my ($foreign, $own) = OpenSearchNode::is_elasticsearch() ? ('flat_object', 'flattened') : ('flattened', 'flat_object');
my ($foreign_engine, $own_engine) = OpenSearchNode::is_elasticsearch() ? ('OpenSearch', 'Elasticsearch') : ('Elasticsearch', 'OpenSearch');
$node->safe_psql('library', q{CREATE TABLE labels (id int PRIMARY KEY, tags jsonb);
	INSERT INTO labels SELECT g, jsonb_build_object('colour', 'c' || g) FROM generate_series(1, 5) g});
sub labels_definition
{
	my ($type) = @_;
	return qq{{"version": 1, "table": "labels", "fields": [{"integer": "id", "required": true},
		{"custom": "tags", "postgres": ["jsonb"], "opensearch": "$type", "required": false}]}};
}
$node->safe_psql('library', q{SELECT flusso_create_index('labels', '} . labels_definition($foreign) . q{')});
$node->safe_psql('library', q{SELECT count(*) FROM flusso_provision()});
$node->safe_psql('library', q{SELECT flusso_set_sinks('labels', ARRAY['table', 'search'], '{"replicas": 0}')});
my $labels_check = $node->safe_psql('library', q{SELECT severity || ': ' || message || ' / ' || hint FROM flusso_check()
	WHERE index = 'labels' AND severity = 'error'});
like($labels_check, qr/^error: the cluster does not accept the mapping of the index: OpenSearch server "search" answered PUT \/t-labels-check-\d+ with HTTP 400: mapper_parsing_exception: .*\[\Q$foreign\E\]/,
	"flusso_check(): the cluster refuses $foreign_engine\'s $foreign");
like($labels_check, qr{/ "\Q$foreign\E" is \Q$foreign_engine\E's type; \Q$own_engine\E's counterpart is "\Q$own\E"},
	"and the hint names $own_engine\'s $own");
ok($node->poll_query_until('library', q{SELECT ship_error ~ ('HTTP 400: mapper_parsing_exception: .*\[' || $$} . $foreign . q{$$ || '\]')
	FROM flusso_status() WHERE index = 'labels'}), 'flusso_status() says why nothing ships: the type refused');
is_deeply($os->indexes_like('t-labels'), [], 'nothing of it is in the cluster');
$node->safe_psql('library', q{SELECT flusso_drop_index('labels')});
$node->safe_psql('library', q{SELECT flusso_create_index('labels', '} . labels_definition($own) . q{')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('labels', ARRAY['table', 'search'], '{"replicas": 0}')});
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_check() WHERE index = 'labels' AND severity = 'error'}),
	'0', "$own_engine\'s $own: flusso_check() finds nothing wrong");
ok(OpenSearchNode::caught_up($node, 'library', 'labels'), 'labels: shipped');
is($os->count('t-labels'), 5, 'labels: 5 documents');

$node->stop;
done_testing();

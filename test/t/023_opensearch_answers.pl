# What OpenSearch answers, taken as a request's outcome and nothing more:
# a _bulk answered with JSON that holds no statuses (1e30), nests 100,000
# levels deep or runs to 100 MB fails that index alone (it backs off and
# says why in flusso_status()), while the shipper goes on shipping
# another index of the database and reads no more than a _bulk's answer
# can hold; a 413 backs off like any failure, rejects nothing that fits
# bulk_max_bytes, and the bulks grow back once it passes; a generation is
# not served while documents it should hold were rejected.  Changes made
# in OpenSearch behind flusso's back: flusso_verify() reads what readers
# read, through the alias, and says when the alias is missing or serves
# another index; the shipper puts the alias back, seeds again into a new
# generation (with flusso's mapping) when the served index is deleted, and
# retries what a closed or write-blocked index refuses.  flusso_check()
# says when the engine's major version is older or newer than those flusso
# is tested with.  The faults come from test/opensearch/fault_proxy.py in
# front of a real node.

use strict;
use warnings;

use Time::HiRes qw(usleep time);
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available('python3');

my $os = OpenSearchNode->start('answers');
my $proxy = FaultProxy->start($os);
my $proxy_port = $proxy->port;

sub fault { $proxy->fault(@_) }

sub answered { $proxy->answered(@_) }

fault('pass');
my $node = flusso_node('answers');
ok(streaming_library($node), 'the library streams');
$node->safe_psql('library', q{INSERT INTO authors (id, name) SELECT g, 'Author ' || g FROM generate_series(5, 204) g});
my $url = $os->url;
$node->safe_psql('library', qq{CREATE SERVER good FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$url', index_prefix 'g-')});
$node->safe_psql('library', qq{CREATE SERVER bad FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url 'http://127.0.0.1:$proxy_port', index_prefix 'b-', connect_timeout '1',
	         request_timeout '4', bulk_max_documents '50')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('books', ARRAY['good'], '{"replicas": 0}')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('authors', ARRAY['bad'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'books: seeded on the good server');
ok(OpenSearchNode::caught_up($node, 'library', 'authors'), 'authors: seeded through the proxy');

my $shipper_sql = q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso shipper'};
my $shipper = $node->safe_psql('library', $shipper_sql);

# The peak resident memory of a process, in kB.
sub peak_kb
{
	my ($pid) = @_;
	return (slurp_file("/proc/$pid/status") =~ /^VmHWM:\s+(\d+) kB/m)[0];
}

# Answers that are JSON but no _bulk results: authors fails alone, books ships.
my $pages = 500;
my $peak_before = peak_kb($shipper);
for my $case (
	[ 'bignum', 'answered a _bulk of [0-9]+ items with something else than their results: item 1 has no HTTP status' ],
	[ 'deep', 'answered a _bulk of [0-9]+ items with something else than their results: it nests more than 1000 levels deep' ],
	[ 'huge 100', 'answered POST /_bulk with more than [0-9]+ bytes' ])
{
	my ($mode, $error) = @$case;
	my $since = $node->safe_psql('library', 'SELECT clock_timestamp()');
	fault($mode);
	$node->safe_psql('library', q{UPDATE authors SET born = COALESCE(born, '1900-01-01') + 1 WHERE id = 5});
	ok( $node->poll_query_until('library', qq{SELECT ship_error ~ '$error' AND ship_error_at > '$since'
		FROM flusso_status() WHERE index = 'authors'}),
		"$mode: authors fails, and flusso_status() says why");
	$pages++;
	$node->safe_psql('library', "UPDATE books SET pages = $pages WHERE id = 1");
	my $deadline = time + 30;
	my $doc;
	while (time < $deadline)
	{
		(undef, $doc) = $os->request('GET', '/g-books/_doc/1');
		last if ($doc->{_source}{pages} // 0) == $pages;
		usleep(100_000);
	}
	is($doc->{_source}{pages}, $pages, "$mode: books ships meanwhile, on the good server");
	is($node->safe_psql('library', $shipper_sql), $shipper, "$mode: the same shipper runs");
	is($node->safe_psql('library', q{SELECT phase FROM flusso_status() WHERE index = 'authors'}), 'live',
		"$mode: authors stays live");
}
my $grown = peak_kb($shipper) - $peak_before;
cmp_ok($grown, '<', 50 * 1024, "a 100 MB answer to a small _bulk grew the shipper's peak memory by $grown kB");
unlike(slurp_file($node->logfile), qr/stack depth limit exceeded|bigint out of range/,
	'no error was raised from an answer');
fault('pass');
ok(OpenSearchNode::caught_up($node, 'library', 'authors'), 'authors catches up once the answers are right');
is_deeply($os->differences($node, 'library', 'authors', 'b-authors', 'SELECT id::text FROM authors'), [],
	'every author equals flusso_build()');

# 413 while authors is seeded again: each live row is two items (the
# served generation and the one being seeded), each seed row one.
my $old = $node->safe_psql('library', q{SELECT concrete FROM flusso.opensearch_generation WHERE index_name = 'authors'});
fault('bulk413');
$node->safe_psql('library', q{SELECT flusso_resnapshot('authors')});
ok( $node->poll_query_until('library', q{SELECT count(*) = 1 FROM flusso.opensearch_generation
		WHERE index_name = 'authors' AND state = 'seeded' AND created}),
	'413: the new generation is created and seeded into the outbox');
$node->safe_psql('library', q{UPDATE authors SET born = '1950-01-01' WHERE id BETWEEN 6 AND 20});
ok( $node->poll_query_until('library', q{SELECT ship_error ~ 'answered POST /_bulk with HTTP 413'
		FROM flusso_status() WHERE index = 'authors'}),
	'413: flusso_status() says so');
my ($count, $start) = (answered('bulk413'), time);
sleep 3;
my $rate = (answered('bulk413') - $count) / (time - $start);
cmp_ok($rate, '<', 3, sprintf('413: the index backs off (%.1f bulks a second)', $rate));
is($node->safe_psql('library', q{SELECT rejected FROM flusso_status() WHERE index = 'authors'}), '0',
	'413: no document is rejected as too large');
is_deeply($os->alias_targets('b-authors'), [$old], '413: the alias still serves the complete generation');
fault('pass');
ok(OpenSearchNode::caught_up($node, 'library', 'authors'), '413: once it passes, the new generation is served');
isnt($os->alias_targets('b-authors')->[0], $old, 'the alias moved');
is_deeply($os->differences($node, 'library', 'authors', 'b-authors', 'SELECT id::text FROM authors'), [],
	'every author is there, and equals flusso_build()');

# The bulks grew back: 200 changed documents take a few bulks, not 200.
my $bulks = answered('pass');
$node->safe_psql('library', q{UPDATE authors SET born = '2000-01-01' WHERE id >= 5});
ok(OpenSearchNode::caught_up($node, 'library', 'authors'), '200 changes are shipped');
my $used = answered('pass') - $bulks;
cmp_ok($used, '<=', 20, "in $used bulks: the cap grew back after the 413s");

# A generation is not served while documents it should hold were rejected.
$node->safe_psql('library', q{CREATE TABLE gadgets (id int PRIMARY KEY, addr text)});
$node->safe_psql('library', q{INSERT INTO gadgets SELECT g, CASE WHEN g = 3 THEN 'not an address' ELSE '10.0.0.' || g END
	FROM generate_series(1, 5) g});
$node->safe_psql('library', q{SELECT flusso_create_index('gadgets', $$
version: 1
table: gadgets
primary_key: id
fields:
  - custom: addr
    postgres: [text]
    opensearch: ip
    required: false
$$)});
$node->safe_psql('library', q{SELECT count(*) FROM flusso_provision()});
$node->safe_psql('library', q{SELECT flusso_set_sinks('gadgets', ARRAY['bad'], '{"replicas": 0}')});
ok( $node->poll_query_until('library', q{SELECT rejected = 1 AND ship_pending = 0 AND ship_error ~ 'is not served: 1 of its documents were rejected'
		FROM flusso_status() WHERE index = 'gadgets'}),
	'gadgets: one document rejected, and the generation is not served');
is($node->safe_psql('library', q{SELECT state FROM flusso.opensearch_generation WHERE index_name = 'gadgets'}),
	'seeded', 'the generation stays seeded');
is_deeply($os->alias_targets('b-gadgets'), [], 'no alias serves it');
$node->safe_psql('library', q{UPDATE gadgets SET addr = '10.0.0.3' WHERE id = 3});
$node->safe_psql('library', q{SELECT flusso_retry_rejected('gadgets')});
ok(OpenSearchNode::caught_up($node, 'library', 'gadgets'), 'once retried, it is served');
is($os->count('b-gadgets'), 5, 'with every document');

is($node->safe_psql('library', $shipper_sql), $shipper, 'the same shipper ran throughout');

# Behind flusso's back: the alias of authors moved to another index (the
# served books), then removed.  The proxy fails the shipper's check of the
# served index (GET _mapping), so that flusso_verify() sees what was made.
my $served = $node->safe_psql('library', q{SELECT concrete FROM flusso.opensearch_generation
	WHERE index_name = 'authors' AND state = 'served'});
my $books = $node->safe_psql('library', q{SELECT concrete FROM flusso.opensearch_generation
	WHERE index_name = 'books' AND state = 'served'});
my $authors = $os->count($served);
fault('nomapping');
$os->request('POST', '/_aliases', qq{{"actions": [{"remove": {"index": "$served", "alias": "b-authors"}},
	{"add": {"index": "$books", "alias": "b-authors"}}]}});
is_deeply($os->alias_targets('b-authors'), [$books], 'the alias of authors serves the books');
is($node->safe_psql('library', q{SELECT count(*) FILTER (WHERE problem IN ('missing', 'different')) || ' '
	|| string_agg(problem, '') FILTER (WHERE id IS NULL) FROM flusso_verify('authors')}),
	qq{$authors alias "b-authors" serves "$books", not "$served"},
	'flusso_verify() reads through the alias: it serves another index, where no author is as built');
$os->request('POST', '/_aliases', qq{{"actions": [{"remove": {"index": "$books", "alias": "b-authors"}}]}});
is($node->safe_psql('library', q{SELECT coalesce(id, '-') || ' ' || problem FROM flusso_verify('authors')}),
	qq{- alias "b-authors" is missing; it should serve "$served"},
	'flusso_verify() says the alias is missing');
fault('pass');
ok( $node->poll_query_until('library', qq{SELECT ship_error = 'OpenSearch alias "b-authors" served nothing; it was put back on "$served"'
		FROM flusso_status() WHERE index = 'authors'}),
	'the shipper puts the alias back, and flusso_status() says so');
is_deeply($os->alias_targets('b-authors'), [$served], 'the alias serves the generation again');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('authors')}), '0', 'flusso_verify() agrees');

# The served index deleted: seeded again into a new generation, with
# flusso's mapping, even if a _bulk recreated the index meanwhile.
$os->request('DELETE', "/$served");
$node->safe_psql('library', q{UPDATE authors SET born = '1990-01-01' WHERE id = 7});
ok( $node->poll_query_until('library', qq{SELECT ship_error ~ 'OpenSearch index "$served", which alias "b-authors" served, was deleted'
		FROM flusso_status() WHERE index = 'authors'}),
	'the deleted index is noticed, and flusso_status() says so');
ok(OpenSearchNode::caught_up($node, 'library', 'authors'), 'a new generation is seeded and served');
my $reseeded = $os->alias_targets('b-authors');
isnt($reseeded->[0], $served, 'the alias serves the new generation');
my (undef, $mapping) = $os->request('GET', "/$reseeded->[0]/_mapping");
is($mapping->{ $reseeded->[0] }{mappings}{dynamic}, 'strict', "with flusso's mapping");
is_deeply($os->indexes_like('b-authors'), $reseeded, 'and no other index of authors is left');
is_deeply($os->differences($node, 'library', 'authors', 'b-authors', 'SELECT id::text FROM authors'), [],
	'every author equals flusso_build()');

# A closed index and a write block refuse documents for now: retried.
for my $case ([ 'closed', "/$books/_close", "/$books/_open", 'index_closed_exception' ],
	[ 'write-blocked', "/$books/_block/write", "/$books/_settings", 'cluster_block_exception' ])
{
	my ($what, $block, $unblock, $type) = @$case;
	$os->request($what eq 'closed' ? 'POST' : 'PUT', $block);
	$pages++;
	$node->safe_psql('library', "UPDATE books SET pages = $pages WHERE id = 2");
	ok( $node->poll_query_until('library', qq{SELECT ship_error ~ 'refused 1 documents for now \\($type\\)'
			FROM flusso_status() WHERE index = 'books'}),
		"$what: the document is refused for now ($type)");
	is($node->safe_psql('library', q{SELECT rejected FROM flusso_status() WHERE index = 'books'}), '0',
		"$what: nothing is rejected");
	if ($what eq 'closed')
	{
		$os->request('POST', $unblock);
	}
	else
	{
		$os->request('PUT', $unblock, '{"index.blocks.write": false}');
	}
	ok(OpenSearchNode::caught_up($node, 'library', 'books'), "$what: shipped once it is lifted");
	my (undef, $doc) = $os->request('GET', '/g-books/_doc/2');
	is($doc->{_source}{pages}, $pages, "$what: the change arrived");
}

# A root TRUNCATE of a large index empties it a turn at a time, so the
# other indexes of the database ship meanwhile.  Every request through the
# proxy waits 0.5 s, so emptying 6,000 gadgets (six pages, each read, then
# deleted) takes seven seconds or more; a change to books, on the good
# server, arrives while it goes on (before, only once it was done).
$node->safe_psql('library', q{INSERT INTO gadgets SELECT g, '10.0.' || (g / 250) || '.' || (g % 250)
	FROM generate_series(6, 6000) g});
ok(OpenSearchNode::caught_up($node, 'library', 'gadgets'), 'gadgets: 6,000 documents shipped');
is($os->count('b-gadgets'), 6000, 'all of them');
fault('slow 0.5');
$node->safe_psql('library', 'TRUNCATE gadgets');
ok( $node->poll_query_until('library', q{SELECT count(*) = 1 FROM flusso.opensearch_generation
		WHERE index_name = 'gadgets' AND truncate_version IS NOT NULL}),
	'the truncate reached the shipper');
$pages++;
$node->safe_psql('library', "UPDATE books SET pages = $pages WHERE id = 2");
my $changed_at = time;
my $arrived;
while (time - $changed_at < 60)
{
	my (undef, $doc) = $os->request('GET', '/g-books/_doc/2');
	if (($doc->{_source}{pages} // -1) == $pages)
	{
		$arrived = time - $changed_at;
		last;
	}
	usleep(50_000);
}
ok(defined $arrived, 'the change to books arrived');
note sprintf('a change to books arrived %.1f s after it was made, while gadgets was emptied', $arrived // -1);
is($node->safe_psql('library', q{SELECT count(*) FROM flusso.opensearch_generation
	WHERE index_name = 'gadgets' AND truncate_version IS NOT NULL}), '1',
	'it arrived while gadgets was still being emptied');
fault('pass');
ok( $node->poll_query_until('library', q{SELECT count(*) = 0 FROM flusso.opensearch_generation
		WHERE index_name = 'gadgets' AND truncate_version IS NOT NULL}),
	'gadgets is emptied');
is($os->count('b-gadgets'), 0, 'with no document left');

# The engine's version, as GET / gives it: one older than those flusso is
# tested with is a warning of flusso_check(), a newer one an info row, and
# one tested with says nothing more.
sub version_rows
{
	return $node->safe_psql('library', q{SELECT severity || ': ' || message FROM flusso_check()
		WHERE index = 'authors' AND path = 'sinks.opensearch' AND message LIKE '%tested with%'});
}
my ($distribution, $engine) = ($os->distribution, OpenSearchNode::engine());
my ($older, $newer, $tested) = OpenSearchNode::is_elasticsearch() ? (7, 10, '8.x to 9.x') : (1, 4, '2.x to 3.x');
is(version_rows(), '', 'a version flusso is tested with: nothing more is said');
fault("major $older");
like(version_rows(),
	qr/^warning: OpenSearch server "bad" runs $distribution $older\.[\d.]+, older than the versions flusso is tested with \($engine \Q$tested\E\)$/,
	'an older major version: a warning');
fault("major $newer");
like(version_rows(),
	qr/^info: OpenSearch server "bad" runs $distribution $newer\.[\d.]+, newer than the versions flusso is tested with \($engine \Q$tested\E\)$/,
	'a newer one: said');
fault('pass');

$node->stop;
$proxy->stop;
done_testing();

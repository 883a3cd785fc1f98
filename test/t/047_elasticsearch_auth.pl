# Elasticsearch's own ways of authenticating, against a real node with
# security on (the es8 and es9 lines; skipped on OpenSearch's): an API
# key, given encoded or as its id and key, ships documents; a key the
# cluster does not know, or one invalidated, is refused and flusso says
# so; a bearer token (a service account's) is sent as one.  No key or
# token shows in flusso_status(), flusso_check() or the server log.

use strict;
use warnings;

use MIME::Base64;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available();

my $es = OpenSearchNode->start('auth', security => 1);
my ($status) = $es->request('GET', '/', undef, { anonymous => 1 });
is($status, 401, 'the node refuses a request without credentials');

my $node = flusso_node('auth');
ok(streaming_library($node), 'the library streams');

sub check
{
	return $node->safe_psql('library', q{SELECT severity || ': ' || message FROM flusso_check()
		WHERE path = 'sinks.opensearch' AND index = 'books'});
}

my $url = $es->url;
$node->safe_psql('library', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$url', index_prefix 'auth-')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('books', ARRAY['table', 'search'], '{"replicas": 0}')});
like(check(), qr/error: OpenSearch server "search" refuses the credentials of role "\w+", which has no user mapping for it \(HTTP 401\)/,
	'no user mapping: refused');

# a key of the right form the cluster never issued
my $forged = encode_base64('forgedid:forgedkeyforgedkey', '');
$node->safe_psql('library', qq{CREATE USER MAPPING FOR CURRENT_USER SERVER search OPTIONS (api_key '$forged')});
like(check(), qr/error: OpenSearch server "search" refuses the credentials of the user mapping of role "\w+" \(HTTP 401\)/,
	'an API key the cluster does not know is refused');

# an API key, encoded: documents are shipped
my $first = $es->create_api_key('flusso-first');
$node->safe_psql('library', qq{ALTER USER MAPPING FOR CURRENT_USER SERVER search OPTIONS (SET api_key '$first->{encoded}')});
my ($distribution, $version) = ($es->distribution, $es->version);
is($distribution, 'elasticsearch', 'the node is an Elasticsearch node');
like(check(), qr/^info: OpenSearch server "search" answers: elasticsearch \Q$version\E$/,
	'with an API key, flusso_check() sees Elasticsearch and its version');
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'books: shipped with an API key');
is_deeply($es->differences($node, 'library', 'books', 'auth-books', 'SELECT id::text FROM books'), [],
	'every document equals flusso_build()');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('books')}), '0', 'flusso_verify() agrees');

# the first key invalidated, a second given as its id and key
ok($es->invalidate_api_key($first->{id}), 'the first key is invalidated');
my $second = $es->create_api_key('flusso-second');
$node->safe_psql('library',
	qq{ALTER USER MAPPING FOR CURRENT_USER SERVER search OPTIONS (SET api_key '$second->{api_key}', ADD api_key_id '$second->{id}')});
$node->safe_psql('library', q{UPDATE books SET pages = 11 WHERE id = (SELECT min(id) FROM books WHERE NOT withdrawn)});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'a live change is shipped with the key given as its id and key');
is_deeply($es->differences($node, 'library', 'books', 'auth-books', 'SELECT id::text FROM books'), [],
	'every document still equals flusso_build()');

# the key in use invalidated: shipping fails, and says why
ok($es->invalidate_api_key($second->{id}), 'the second key is invalidated');
$node->safe_psql('library', q{UPDATE books SET pages = 12 WHERE id = (SELECT min(id) FROM books WHERE NOT withdrawn)});
ok( $node->poll_query_until('library', q{SELECT ship_error LIKE '%HTTP 401%' FROM flusso_status() WHERE index = 'books'}),
	'with its key invalidated, flusso_status() says the cluster refuses the credentials');
is($node->safe_psql('library', q{SELECT flusso_wait('books', '1s')}), 'f', 'and no wait says the change is there');

# a bearer token: a service account's, which may read the cluster's identity
my ($token_status, $token) = $es->request('POST', '/_security/service/elastic/fleet-server/credential/token/flusso');
is($token_status, 200, 'a service account token is made');
$node->safe_psql('library',
	qq{ALTER USER MAPPING FOR CURRENT_USER SERVER search OPTIONS (DROP api_key, DROP api_key_id, ADD bearer_token '$token->{token}{value}')});
# (the service account may not create indexes: flusso_check() says so too)
like(check(), qr/^info: OpenSearch server "search" answers: elasticsearch \Q$version\E$/m,
	'a bearer token authenticates');
$node->safe_psql('library', q{ALTER USER MAPPING FOR CURRENT_USER SERVER search OPTIONS (SET bearer_token 'bm90LWEtdG9rZW4')});
like(check(), qr/error: OpenSearch server "search" refuses the credentials of the user mapping of role "\w+" \(HTTP 401\)/,
	'a bearer token the cluster does not know is refused');

# no key or token shows anywhere
my @secrets = ($first->{encoded}, $first->{api_key}, $second->{encoded}, $second->{api_key}, $token->{token}{value});
my $shown = $node->safe_psql('library', q{SELECT string_agg(concat_ws(' ', ship_error, last_error), ' ') FROM flusso_status()})
  . check();
is(scalar(grep { index($shown, $_) >= 0 } @secrets), 0, 'flusso_status() and flusso_check() show no key or token');
# (the test cluster logs every statement: those that set the options, each
# on one line, are the test's own, not flusso's)
my $log = join("\n", grep { !/statement: (CREATE|ALTER) USER MAPPING/ } split /\n/, slurp_file($node->logfile));
is(scalar(grep { index($log, $_) >= 0 } @secrets), 0, 'flusso wrote no key or token to the server log');

$node->stop;
done_testing();

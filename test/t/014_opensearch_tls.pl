# TLS and basic authentication, through nginx in front of the real node:
# the certificate is verified (a CA flusso does not know is refused), the
# credentials come from the user mapping of the index's owner (none, or a
# wrong password, is refused, and flusso_check() says so), and with both
# right documents are shipped, by the url and then by an Elastic Cloud ID
# that names the same proxy (libcurl takes *.localhost for loopback).  The password shows nowhere: not to other
# roles, not in flusso_status(), not in the server log.

use strict;
use warnings;

use IPC::Run;
use MIME::Base64;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available('/usr/sbin/nginx', 'openssl');

my $os = OpenSearchNode->start('tls');
my $dir = "$PostgreSQL::Test::Utils::tmp_check/nginx";
mkdir $dir;

# a CA, and a certificate it signs for 127.0.0.1 and the host a Cloud ID
# names
sub openssl
{
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'openssl', @_ ], '>', \$out, '2>', \$err) or die "openssl @_: $err";
	return $out;
}
openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=flusso test CA',
	'-keyout', "$dir/ca.key", '-out', "$dir/ca.pem");
openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1',
	'-keyout', "$dir/server.key", '-out', "$dir/server.csr");
PostgreSQL::Test::Utils::append_to_file("$dir/san.ext", "subjectAltName = IP:127.0.0.1, DNS:flusso-es.localhost\n");
openssl('x509', '-req', '-in', "$dir/server.csr", '-CA', "$dir/ca.pem", '-CAkey', "$dir/ca.key",
	'-CAcreateserial', '-days', '2', '-extfile', "$dir/san.ext", '-out', "$dir/server.pem");
my $hash = openssl('passwd', '-apr1', 'correct horse');
chomp $hash;
PostgreSQL::Test::Utils::append_to_file("$dir/htpasswd", "flusso:$hash\n");

my $port = PostgreSQL::Test::Cluster::get_free_port();
my $upstream = $os->port;
PostgreSQL::Test::Utils::append_to_file("$dir/nginx.conf", <<"EOF");
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events {}
http {
	log_format with_host '\$host \$remote_user "\$request" \$status';
	access_log $dir/access.log with_host;
	client_body_temp_path $dir/body;
	proxy_temp_path $dir/proxy;
	fastcgi_temp_path $dir/fastcgi;
	uwsgi_temp_path $dir/uwsgi;
	scgi_temp_path $dir/scgi;
	client_max_body_size 100m;
	server {
		listen 127.0.0.1:$port ssl;
		ssl_certificate $dir/server.pem;
		ssl_certificate_key $dir/server.key;
		auth_basic "flusso test";
		auth_basic_user_file $dir/htpasswd;
		location / {
			proxy_pass http://127.0.0.1:$upstream;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
		}
	}
}
EOF
my $nginx = IPC::Run::start([ '/usr/sbin/nginx', '-p', $dir, '-c', "$dir/nginx.conf" ],
	'>', \my $nginx_out, '2>', \my $nginx_err);
my $up = 0;
for (1 .. 100)
{
	$up = `curl -s -o /dev/null -w '%{http_code}' --cacert $dir/ca.pem https://127.0.0.1:$port/` eq '401';
	last if $up;
	select(undef, undef, undef, 0.1);
}
ok($up, 'nginx answers with TLS and asks for credentials');

my $node = flusso_node('tls');
ok(streaming_library($node), 'the library streams');
$node->safe_psql('library', q{CREATE ROLE other LOGIN; GRANT flusso_admin TO other});

sub check
{
	return $node->safe_psql('library', q{SELECT severity || ': ' || message FROM flusso_check()
		WHERE path = 'sinks.opensearch' AND index = 'books'});
}

# TLS: a certificate of a CA flusso does not know is refused
$node->safe_psql('library', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url 'https://127.0.0.1:$port', index_prefix 'tls-')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('books', ARRAY['table', 'search'], '{"replicas": 0}')});
like(check(), qr/error: OpenSearch server "search" cannot be reached: .*certificate/,
	'an unknown CA: the certificate is refused');

# the CA given, but no credentials
$node->safe_psql('library', qq{ALTER SERVER search OPTIONS (ADD ca_file '$dir/ca.pem')});
like(check(), qr/error: OpenSearch server "search" refuses the credentials of role "\w+", which has no user mapping for it \(HTTP 401\)/,
	'no user mapping: the credentials are refused');
like($node->safe_psql('library', q{SELECT sql FROM flusso_provision() WHERE action LIKE 'user mapping%'}),
	qr/^CREATE USER MAPPING FOR \w+ SERVER search OPTIONS \(user '...', password '...'\)$/,
	'flusso_provision() says what to create');

# a wrong password
$node->safe_psql('library', q{CREATE USER MAPPING FOR CURRENT_USER SERVER search OPTIONS (user 'flusso', password 'wrong horse')});
like(check(), qr/error: OpenSearch server "search" refuses the credentials of the user mapping of role "\w+" \(HTTP 401\)/,
	'a wrong password is refused');

# right: documents are shipped
$node->safe_psql('library', q{ALTER USER MAPPING FOR CURRENT_USER SERVER search OPTIONS (SET password 'correct horse')});
my ($distribution, $version) = ($os->distribution, $os->version);
like(check(), qr/^info: OpenSearch server "search" answers: $distribution \Q$version\E$/, 'with both right, the cluster answers');
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'books: shipped through TLS and basic authentication');
is_deeply($os->differences($node, 'library', 'books', 'tls-books', 'SELECT id::text FROM books'), [],
	'every document equals flusso_build()');
$node->safe_psql('library', q{UPDATE books SET pages = 11 WHERE id = (SELECT min(id) FROM books WHERE NOT withdrawn)});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'a live change is shipped too');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('books')}), '0', 'flusso_verify() agrees');

# the password shows nowhere
is($node->safe_psql('library', q{SET ROLE other; SELECT umoptions IS NULL FROM pg_user_mappings WHERE srvname = 'search'}),
	't', 'another role does not see the user mapping');
unlike($node->safe_psql('library', q{SET ROLE other; SELECT string_agg(concat_ws(' ', ship_error, last_error), ' ') FROM flusso_status()}),
	qr/horse/, 'flusso_status() shows no password');
# (the test cluster logs every statement: the two that set the password
# are the test's own, not flusso's)
unlike(join("\n", grep { !/statement: (CREATE|ALTER) USER MAPPING/ } split /\n/, slurp_file($node->logfile)),
	qr/horse/, 'flusso wrote no password to the server log');
like(slurp_file("$dir/access.log"), qr/^127\.0\.0\.1 flusso "/m, 'requests authenticated as the mapped user');

# an Elastic Cloud ID in place of the url: name:base64(domain:port$es-id$kibana-id)
# is https://es-id.domain:port, here the proxy again under its other name
my $cloud_id = 'flusso-test:' . encode_base64("localhost:$port\$flusso-es\$kibana-id", '');
$node->safe_psql('library', qq{ALTER SERVER search OPTIONS (DROP url, ADD cloud_id '$cloud_id')});
like(check(), qr/^info: OpenSearch server "search" answers: $distribution \Q$version\E$/,
	'by its Cloud ID, the cluster answers');
$node->safe_psql('library', q{UPDATE books SET pages = 12 WHERE id = (SELECT min(id) FROM books WHERE NOT withdrawn)});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'a live change is shipped by the Cloud ID');
is_deeply($os->differences($node, 'library', 'books', 'tls-books', 'SELECT id::text FROM books'), [],
	'every document equals flusso_build()');
like(slurp_file("$dir/access.log"), qr/^flusso-es\.localhost flusso "POST \/_bulk/m,
	'the bulk went to the host the Cloud ID names, with the mapped user');

$node->stop;
$nginx->signal('TERM');
$nginx->finish;
done_testing();

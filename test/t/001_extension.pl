# The library is preloaded and reserves its settings prefix; index
# definitions survive a restart and a pg_dump / restore round trip.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('main');

is($node->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'flusso', 'flusso is preloaded');

my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'SET flusso.no_such_setting = 1');
isnt($ret, 0, 'a misspelt flusso setting is refused');
like($stderr, qr/invalid configuration parameter name "flusso\.no_such_setting"/,
	'the refusal names the setting');

load_library($node, 'library');
my $books = slurp_file(fixture_path('books.schema.yml'));
my $authors = slurp_file(fixture_path('authors.schema.json'));
$node->safe_psql('library',
	"SELECT flusso_create_index('books', \$def\$$books\$def\$)");
$node->safe_psql('library',
	"SELECT flusso_create_index('authors', \$def\$$authors\$def\$)");

my $catalog_query =
  "SELECT name, version, owner, definition, source FROM flusso.index ORDER BY name";
my $before = $node->safe_psql('library', $catalog_query);
like($before, qr/^authors\|[0-9a-f]{16}\|/m, 'authors is defined');
like($before, qr/^books\|[0-9a-f]{16}\|/m, 'books is defined');

$node->restart;
is($node->safe_psql('library', $catalog_query),
	$before, 'definitions survive a restart');

# pg_dump keeps definitions: flusso.index is an extension configuration table.
my $dump = $node->basedir . '/library.sql';
$node->command_ok(
	[ 'pg_dump', '--file', $dump, '--dbname', $node->connstr('library') ],
	'pg_dump of a database with flusso indexes');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok(
	[
		'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1',
		'--file', $dump, '--dbname', $node->connstr('restored')
	],
	'restore into a new database');
is($node->safe_psql('restored', $catalog_query),
	$before, 'the restored database has the same definitions');
is( $node->safe_psql('restored', "SELECT flusso_mapping('books')"),
	$node->safe_psql('library', "SELECT flusso_mapping('books')"),
	'the restored definition derives the same mapping');

# The restore ran CREATE EXTENSION before loading the definitions, so no
# function told the launcher about them: it finds them by probing again.
ok( $node->poll_query_until(
		'restored', q{SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE backend_type = 'flusso worker' AND datname = 'restored'}),
	'a worker starts for the restored database');

done_testing();

# Trust: the worker runs every statement with rights that are not the
# caller's, so nothing a database owner or an index owner controls may steer
# it.  A database's search_path cannot put an operator of the owner's in
# the worker's way; hostile DateStyle, IntervalStyle, extra_float_digits,
# TimeZone and bytea_output for the database and the worker's role cannot
# change which document a key names; an index whose owner may not read a
# table stops alone, and no value of that table reaches flusso_status();
# documents are read by their owner and whom it grants, across re-seeds.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('trust');

sub phase_is
{
	my ($db, $index, $phase, $name) = @_;
	ok( $node->poll_query_until(
			$db, "SELECT phase OPERATOR(pg_catalog.=) '$phase' FROM public.flusso_status()
			  WHERE index OPERATOR(pg_catalog.=) '$index'"),
		$name);
}

sub worker_pid
{
	my ($db) = @_;
	return $node->safe_psql($db,
		q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso worker' AND datname = current_database()});
}

# --- a database's search_path does not reach the worker -----------------
# regress_mallory owns database trap and a schema of operators, functions
# and types that shadow pg_catalog's and make their caller's role a
# superuser, and puts that schema first in the database's search_path.
# (The test's own queries there qualify what they call: they run as a
# superuser too.)
load_library($node, 'trap');
$node->safe_psql('postgres', q{CREATE ROLE regress_mallory LOGIN IN ROLE flusso_admin});
$node->safe_psql('postgres', q{ALTER DATABASE trap OWNER TO regress_mallory});
$node->safe_psql('trap', q{
	GRANT SELECT ON ALL TABLES IN SCHEMA public TO regress_mallory;
	CREATE SCHEMA mal AUTHORIZATION regress_mallory;
	SET ROLE regress_mallory;
} . slurp_file(fixture_path('traps.sql')) . q{
	ALTER DATABASE trap SET search_path = mal, pg_catalog;
});
is( $node->safe_psql('trap', q{SET ROLE regress_mallory; SELECT 'a'::text = 'a'; SELECT pg_catalog.count(*) FROM mal.sprung}),
	"t\n2", 'the traps spring for a session of the database');
$node->safe_psql('trap', q{DELETE FROM mal.sprung});
for my $index ('books', 'authors')
{
	my $definition = slurp_file(fixture_path("$index.schema.yml"));
	$node->safe_psql('trap',
		"SET ROLE regress_mallory; SELECT public.flusso_create_index('$index', \$def\$$definition\$def\$)");
}
$node->safe_psql('trap', q{SET search_path = public; SELECT pg_catalog.count(*) FROM flusso_provision()});
phase_is('trap', 'books', 'live', 'the worker seeds a database whose search_path is a trap');
$node->safe_psql('trap', q{SET search_path = public;
	UPDATE books SET title = 'Trapped' WHERE id = 1; DELETE FROM reviews WHERE id = 2;
	SELECT flusso_resnapshot('authors')});
ok( $node->poll_query_until(
		'trap', q{SELECT doc ->> 'title' OPERATOR(pg_catalog.=) 'Trapped' FROM flusso_docs.books
		  WHERE id OPERATOR(pg_catalog.=) '1'}),
	'and follows its changes');
phase_is('trap', 'authors', 'live', 'and seeds an index again');
is($node->safe_psql('trap', q{SELECT pg_catalog.count(*) FROM public.flusso_verify('books')}), '0',
	'the documents are right');
is($node->safe_psql('trap', q{SELECT pg_catalog.count(*) FROM mal.sprung}), '0',
	'no trap sprang inside the worker');
is($node->safe_psql('postgres', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_mallory'}),
	'f', 'and regress_mallory is no superuser');

# --- hostile settings do not change which document a key names ----------
# Keys of every kind whose text depends on a setting, with the database's
# and the worker's role's defaults set against the pinned ones.
$node->safe_psql('postgres', q{CREATE DATABASE hostile});
$node->safe_psql('postgres', q{
	ALTER DATABASE hostile SET DateStyle = 'SQL, DMY';
	ALTER DATABASE hostile SET IntervalStyle = 'sql_standard';
	ALTER DATABASE hostile SET extra_float_digits = 0;
	ALTER DATABASE hostile SET TimeZone = 'Pacific/Chatham';
	ALTER DATABASE hostile SET bytea_output = 'escape';
	ALTER DATABASE hostile SET lc_numeric = 'C.utf8';
	ALTER ROLE postgres IN DATABASE hostile SET DateStyle = 'German, DMY';
	ALTER ROLE postgres IN DATABASE hostile SET extra_float_digits = -3;
	ALTER ROLE postgres IN DATABASE hostile SET lc_monetary = 'C.utf8';
});
$node->safe_psql('hostile', q{
	CREATE TABLE dates (k date PRIMARY KEY, v text);
	CREATE TABLE stamps (k timestamp PRIMARY KEY, v text);
	CREATE TABLE zoned (k timestamptz PRIMARY KEY, v text);
	CREATE TABLE floats (k float8 PRIMARY KEY, v text);
	CREATE TABLE spans (k interval PRIMARY KEY, v text);
	CREATE TABLE blobs (k bytea PRIMARY KEY, v text);
	CREATE TABLE sums (k money PRIMARY KEY, v text);
	INSERT INTO dates VALUES ('2024-01-02', 'a'), ('2024-02-01', 'b');
	INSERT INTO stamps VALUES ('2024-01-02 03:04:05.5', 'a'), ('2024-02-01 03:04:05', 'b');
	INSERT INTO zoned VALUES ('2024-01-02 03:04:05+00', 'a'), ('2024-01-02 03:04:05+05', 'b');
	INSERT INTO floats VALUES (0.3, 'a'), (0.30000000000000004, 'b'), (1e-7, 'c');
	INSERT INTO spans VALUES ('1 day 02:00:00', 'a'), ('-3 days 00:00:01', 'b');
	INSERT INTO blobs VALUES ('\x00ff', 'a'), ('\x5c41', 'b');
	INSERT INTO sums VALUES (1234.5, 'a'), (-0.25, 'b');
	CREATE EXTENSION flusso;
});
my @hostile = qw(dates stamps zoned floats spans blobs sums);
for my $table (@hostile)
{
	$node->safe_psql('hostile',
		"SELECT flusso_create_index('$table', '{\"version\": 1, \"table\": \"$table\", \"fields\": [{\"keyword\": \"v\", \"required\": false}]}')");
}
$node->safe_psql('hostile', q{SELECT count(*) FROM flusso_provision()});
for my $table (@hostile)
{
	phase_is('hostile', $table, 'live', "a $table-keyed index is seeded under hostile settings");
}
$node->safe_psql('hostile', join(';', map { "UPDATE $_ SET v = v || ' changed'" } @hostile));
for my $table (@hostile)
{
	ok( $node->poll_query_until(
			'hostile', "SELECT bool_and(doc ->> 'v' LIKE '% changed') AND count(*) = (SELECT count(*) FROM $table)
			  FROM flusso_docs.$table"),
		"every $table document follows its row");
	is($node->safe_psql('hostile', "SELECT count(*) FROM flusso_verify('$table')"), '0',
		"and equals a fresh build");
}
is( $node->safe_psql('hostile', q{SELECT string_agg(id, ' ' ORDER BY id) FROM flusso_docs.floats}),
	'0.3 0.30000000000000004 1e-07', 'float keys are exact');
is( $node->safe_psql('hostile', q{SELECT string_agg(id, ' ' ORDER BY id) FROM flusso_docs.dates}),
	'2024-01-02 2024-02-01', 'date keys read ISO');
is($node->safe_psql('hostile', q{SELECT count(*) FROM flusso_status() WHERE last_error IS NOT NULL}),
	'0', 'and nothing failed');

# --- an owner without a privilege stops its own index, and leaks nothing
$node->safe_psql('postgres', q{CREATE ROLE regress_alice IN ROLE flusso_admin;
	CREATE ROLE regress_bob IN ROLE flusso_admin});
$node->safe_psql('postgres', q{CREATE DATABASE rights});
$node->safe_psql('rights', q{
	CREATE TABLE people (id smallint PRIMARY KEY, name text NOT NULL);
	CREATE TABLE salaries (id int PRIMARY KEY, person bigint NOT NULL, amount bigint NOT NULL);
	CREATE TABLE notes (id int PRIMARY KEY, person bigint NOT NULL);
	INSERT INTO people VALUES (1, 'ann'), (2, 'bo');
	INSERT INTO salaries VALUES (1, 1, 5000);
	INSERT INTO notes VALUES (1, 1);
	GRANT SELECT ON people, notes TO regress_alice;
	ALTER TABLE salaries REPLICA IDENTITY FULL;
	ALTER TABLE notes REPLICA IDENTITY FULL;
	CREATE EXTENSION flusso;
	SET ROLE regress_alice;
	SELECT flusso_create_index('open', 'version: 1
table: people
fields: [ { keyword: name, required: true } ]');
	SELECT flusso_create_index('paid', 'version: 1
table: people
fields:
  - { keyword: name, required: true }
  - { count: salaries, table: salaries, foreign_key: person }');
	SELECT flusso_create_index('noted', 'version: 1
table: people
fields:
  - { keyword: name, required: true }
  - { count: notes, table: notes, foreign_key: person }');
	RESET ROLE;
	SELECT count(*) FROM flusso_provision();
});
phase_is('rights', 'open', 'live', 'an index its owner may read is seeded');
phase_is('rights', 'paid', 'error', 'one that reads a table its owner may not read goes to phase error');
is( $node->safe_psql('rights', q{SELECT last_error FROM flusso_status() WHERE index = 'paid'}),
	'role "regress_alice" lacks SELECT on column "person" of table "public.salaries"',
	'with the reason');
my $pid = worker_pid('rights');
# a salary far outside smallint: resolving it as a key of people would fail
# with the value in the message
$node->safe_psql('rights', q{INSERT INTO salaries VALUES (2, 7000000099, 7000000099);
	UPDATE people SET name = 'ann b' WHERE id = 1});
ok( $node->poll_query_until(
		'rights', q{SELECT doc ->> 'name' = 'ann b' FROM flusso_docs.open WHERE id = '1'}),
	'the other index goes on');
is($node->safe_psql('rights', q{SELECT count(*) FROM flusso_status()
	WHERE concat_ws(' ', last_error, phase) LIKE '%7000000099%'}),
	'0', 'no value of the unreadable table shows in flusso_status()');
$node->safe_psql('rights', q{GRANT SELECT ON salaries TO regress_alice});
phase_is('rights', 'paid', 'live', 'granted the privilege, the index is seeded');
is($node->safe_psql('rights', q{SELECT count(*) FROM flusso_verify('paid')}), '0', 'and right');

# a privilege revoked while live: that index stops, alone, without the
# worker restarting
$pid = worker_pid('rights');
$node->safe_psql('rights', q{REVOKE SELECT ON notes FROM regress_alice;
	INSERT INTO notes VALUES (2, 2); UPDATE people SET name = 'bo c' WHERE id = 2});
phase_is('rights', 'noted', 'error', 'an index whose owner lost a privilege goes to phase error');
ok( $node->poll_query_until(
		'rights', q{SELECT doc ->> 'name' = 'bo c' FROM flusso_docs.open WHERE id = '2'}),
	'the others go on');
is(worker_pid('rights'), $pid, 'and the worker did not restart');

# a value the owner may read, but that fails as a key: the status says
# which SQLSTATE, the server log alone has the message with the value
$node->safe_psql('rights', q{GRANT SELECT ON notes TO regress_alice});
phase_is('rights', 'noted', 'live', 'granted again, the index is seeded again');
my $log_offset = -s $node->logfile;
$node->safe_psql('rights', q{INSERT INTO notes VALUES (3, 7000000099)});
phase_is('rights', 'noted', 'error', 'a key out of range stops the index');
like($node->safe_psql('rights', q{SELECT last_error FROM flusso_status() WHERE index = 'noted'}),
	qr/^an error with SQLSTATE 22003 \(its message may quote row values/,
	'flusso_status() gives its SQLSTATE, not its message');
ok($node->log_contains('value "7000000099" is out of range for type smallint', $log_offset),
	'the server log has the message');
$node->safe_psql('rights', q{DELETE FROM notes WHERE id = 3});

# documents are read by their owner and whom it grants, across re-seeds
$node->safe_psql('rights', q{SET ROLE regress_alice; GRANT SELECT ON flusso_docs.open TO regress_bob});
my $oid = $node->safe_psql('rights', q{SELECT 'flusso_docs.open'::regclass::oid});
$node->safe_psql('rights', q{SET ROLE regress_alice; SELECT flusso_resnapshot('open')});
ok( $node->poll_query_until(
		'rights', qq{SELECT 'flusso_docs.open'::regclass::oid <> $oid
		  AND (SELECT phase = 'live' FROM flusso_status() WHERE index = 'open')}),
	'a re-seed puts a new documents table in place');
is( $node->safe_psql('rights', q{SET ROLE regress_bob; SELECT string_agg(id, ',' ORDER BY id) FROM flusso_docs.open}),
	'1,2', 'what its owner granted on the old one holds on the new one');
my ($ret, $out, $err) = $node->psql('rights', q{SET ROLE regress_bob; SELECT count(*) FROM flusso_docs.paid});
like($err, qr/permission denied for table paid/, 'and documents not granted stay unreadable');

$node->stop;
done_testing();

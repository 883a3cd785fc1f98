# Hostile input never takes the cluster down: indexes over tables with keys
# of every type, edge values, nullable and duplicate declared keys are each
# either live and right or in phase error with the reason, and the
# postmaster never restarts.  A worker that keeps dying on an index sets it
# aside; one that dies with no index in hand waits before starting again.
# A database left without a worker says so, and a SQL_ASCII database gets
# the same UTF-8 checks as any other.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('hostile');
$node->append_conf('postgresql.conf', "restart_after_crash = on\n");
$node->reload;

# --- keys of every type, with edge values ---------------------------------
my %types = (
	int2 => q{SELECT i::int2 FROM generate_series(-32768, 32767, 4099) i},
	int4 => q{SELECT i FROM generate_series(-2147483648, 2147483647, 268435455) i},
	int8 => q{SELECT (i * 1152921504606846975)::int8 FROM generate_series(-8, 7) i},
	numeric => q{SELECT unnest('{0,-0.0001,1e20,NaN,Infinity,-Infinity,3.14159265358979323846264338327950288}'::numeric[])},
	float4 => q{SELECT unnest('{0,-0.1,1e-38,3.4e38,NaN,Infinity,-Infinity,0.3}'::float4[])},
	float8 => q{SELECT unnest('{0.3,0.30000000000000004,1e-300,1.7976931348623157e308,NaN,-Infinity,5e-324}'::float8[])},
	text => q{SELECT unnest(ARRAY['a:b', 'a\\b', 'quote''s', 'tab	x', 'ünï©ødé', '', ' ', 'x' || repeat('y', 3000)])},
	varchar => q{SELECT unnest(ARRAY['a:b', 'b:', ':', '\\'])::varchar(10)},
	bpchar => q{SELECT unnest(ARRAY['a', 'ab ', 'abc'])::char(3)},
	date => q{SELECT unnest('{2024-02-29,0001-01-01,5874897-12-31,infinity,-infinity}'::date[])},
	timestamp => q{SELECT unnest('{2024-02-29 23:59:59.999999,4713-01-01 BC,infinity}'::timestamp[])},
	timestamptz => q{SELECT unnest('{2024-03-31 02:30:00+02,2024-10-27 02:30:00+01,-infinity}'::timestamptz[])},
	time => q{SELECT unnest('{00:00,23:59:59.999999,24:00}'::time[])},
	interval => q{SELECT unnest('{1 mon,-1 day,00:00:00.000001,178000000 years}'::interval[])},
	uuid => q{SELECT gen_random_uuid() FROM generate_series(1, 5)},
	bytea => q{SELECT unnest(ARRAY['\\x'::bytea, '\\x00', '\\x5c3a', '\\xffff'])},
	bool => q{SELECT unnest('{true,false}'::bool[])},
	inet => q{SELECT unnest('{10.0.0.1/8,::1,192.168.1.0/24}'::inet[])},
	money => q{SELECT unnest('{0,-92233720368547758.08,92233720368547758.07}'::money[])},
	mood => q{SELECT unnest(enum_range(NULL::mood))},
	code => q{SELECT unnest(ARRAY['x:1', 'y\\2'])::code},
);
$node->safe_psql('postgres', 'CREATE DATABASE keys');
$node->safe_psql('keys', q{
	CREATE EXTENSION flusso;
	CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
	CREATE DOMAIN code AS text CHECK (VALUE <> '');
	CREATE PUBLICATION flusso FOR ALL TABLES;
});
for my $type (sort keys %types)
{
	$node->safe_psql('keys', qq{
		CREATE TABLE k_$type (k $type PRIMARY KEY, v text);
		INSERT INTO k_$type SELECT DISTINCT k, 'v' FROM ($types{$type}) t(k);
		SELECT flusso_create_index('k_$type', 'version: 1
table: k_$type
fields: [ { keyword: v, required: false } ]');
	});
}
# composite keys whose parts hold ':' and '\'
$node->safe_psql('keys', q{
	CREATE TABLE pairs (a text, b text, v text, PRIMARY KEY (a, b));
	INSERT INTO pairs VALUES ('x:y', 'z', 'v'), ('x', 'y:z', 'v'), ('\\', ':', 'v'), ('\\:', '', 'v');
	SELECT flusso_create_index('pairs', 'version: 1
table: pairs
primary_key: [a, b]
fields: [ { keyword: v, required: false } ]');
});
# declared keys that can be null or are not unique
$node->safe_psql('keys', q{
	CREATE TABLE loose (id int PRIMARY KEY, code text, dup text NOT NULL, v text);
	INSERT INTO loose VALUES (1, NULL, 'd', 'v'), (2, 'a', 'd', 'v'), (3, 'a', 'e', 'v');
	SELECT flusso_create_index('nullable', 'version: 1
table: loose
primary_key: code
fields: [ { keyword: v, required: false } ]');
	SELECT flusso_create_index('duplicated', 'version: 1
table: loose
primary_key: dup
fields: [ { keyword: v, required: false } ]');
	SELECT flusso_create_index('half', 'version: 1
table: loose
primary_key: [id, code]
fields: [ { keyword: v, required: false } ]');
});
# as wide as a definition gets: 20,000 fields
$node->safe_psql('keys', q{SELECT flusso_create_index('wide',
	'{"version":1,"table":"pairs","primary_key":["a","b"],"fields":['
	|| string_agg(format('{"keyword":"f%s","column":"v","required":false}', i), ',')
	|| ']}') FROM generate_series(1, 20000) i});
my @good = ((map { "k_$_" } sort keys %types), 'pairs');
for my $index (@good)
{
	ok( $node->poll_query_until(
			'keys', "SELECT phase = 'live' FROM flusso_status() WHERE index = '$index'"),
		"$index is seeded");
}
ok( $node->poll_query_until(
		'keys', "SELECT phase = 'live' FROM flusso_status() WHERE index = 'wide'"),
	'an index of 20,000 fields is seeded');
for my $index ('nullable', 'duplicated', 'half')
{
	ok( $node->poll_query_until(
			'keys', "SELECT phase = 'error' FROM flusso_status() WHERE index = '$index'"),
		"$index is in phase error");
}
like($node->safe_psql('keys', q{SELECT last_error FROM flusso_status() WHERE index = 'nullable'}),
	qr/may be null: column "code" is not NOT NULL/, 'a key that may be null is refused');
like($node->safe_psql('keys', q{SELECT last_error FROM flusso_status() WHERE index = 'duplicated'}),
	qr/is not unique/, 'a key that is not unique is refused');
$node->safe_psql('keys', join(';', map { "UPDATE $_ SET v = 'w'" } @good));
for my $index (@good)
{
	ok( $node->poll_query_until(
			'keys', "SELECT bool_and(doc ->> 'v' = 'w') FROM flusso_docs.$index"),
		"$index follows its rows");
	is($node->safe_psql('keys', "SELECT count(*) FROM flusso_verify('$index')"), '0',
		"$index equals a fresh build");
	is($node->safe_psql('keys', "SELECT (SELECT count(*) FROM flusso_docs.$index) = (SELECT count(*) FROM $index)"),
		't', "$index has a document per row");
}
ok( $node->poll_query_until(
		'keys', q{SELECT bool_and(doc ->> 'f20000' = 'w') AND count(*) = 4 FROM flusso_docs.wide}),
	'and follows its rows');
is($node->safe_psql('keys', "SELECT count(*) FROM flusso_verify('wide')"), '0', 'and is right');
ok(!$node->log_contains('terminated by signal'), 'no process died by a signal');
ok(!$node->log_contains('reinitializing'), 'and the postmaster never restarted the cluster');

# --- a worker that keeps dying on an index sets it aside ---------------------
# (each row of the slow index takes 10 s to build: the worker is killed
# before a chunk of its seed commits, so it never makes progress, which
# would forgive its strikes)
load_library($node, 'crashy');
$node->safe_psql('crashy', q{INSERT INTO books (id, isbn, title, language, metadata)
	SELECT i, 'isbn-' || i, 'Book ' || i, 'en', '{}' FROM generate_series(5, 300) i;
	SELECT flusso_create_index('good', 'version: 1
table: authors
fields: [ { identifier: name, required: true } ]');
	SELECT flusso_create_index('slow', 'version: 1
table: books
filters: [ { raw: "pg_catalog.pg_sleep(10) IS NOT NULL" } ]
fields: [ { text: title, required: true } ]');
	SELECT count(*) FROM flusso_provision()});
for my $death (1 .. 3)
{
	ok( $node->poll_query_until(
			'postgres', q{SELECT count(*) = 1 FROM pg_stat_activity
			  WHERE backend_type = 'flusso worker' AND datname = 'crashy' AND wait_event = 'PgSleep'}),
		"the worker builds the slow index ($death)");
	my $pid = $node->safe_psql('postgres',
		q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso worker' AND datname = 'crashy'});
	my $offset = -s $node->logfile;
	kill 'KILL', $pid;
	ok($node->wait_for_log(qr/all server processes terminated; reinitializing/, $offset),
		"killing it restarts the cluster ($death)");
}
ok( $node->poll_query_until(
		'crashy', q{SELECT phase = 'error' AND last_error LIKE 'the worker died 3 times in a row while working on this index%'
		  FROM flusso_status() WHERE index = 'slow'}),
	'after three deaths the index is set aside, with the reason');
ok( $node->poll_query_until(
		'crashy', q{SELECT phase = 'live' FROM flusso_status() WHERE index = 'good'}),
	'the other index goes on');
my $offset = -s $node->logfile;
# a positive marker that the worker goes on: a change to the good index
# applied, with the slow one set aside
$node->safe_psql('crashy', q{UPDATE authors SET name = 'Still Here' WHERE id = 1});
ok( $node->poll_query_until(
		'crashy', q{SELECT doc ->> 'name' = 'Still Here' FROM flusso_docs.good WHERE id = '1'}),
	'the worker goes on with the good index');
ok(!$node->log_contains('reinitializing', $offset), 'and the cluster stays up');
$node->safe_psql('crashy', q{SELECT flusso_create_index('slow', 'version: 1
table: books
fields: [ { text: title, required: true } ]', true)});
ok( $node->poll_query_until(
		'crashy', q{SELECT phase = 'live' FROM flusso_status() WHERE index = 'slow'}),
	'a new definition is tried again, and seeded');
is($node->safe_psql('crashy', q{SELECT count(*) FROM flusso_verify('slow')}), '0', 'and right');

# a death with no index in hand: the next worker waits before it starts
my $log = -s $node->logfile;
my $pid = $node->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso worker' AND datname = 'crashy'});
kill 'KILL', $pid;
ok($node->wait_for_log(qr/stopped unexpectedly 1 times in a row; waiting 1 s before starting again/, $log),
	'a worker that died idle backs off');
ok( $node->poll_query_until(
		'crashy', q{SELECT count(*) = 2 FROM flusso_status() WHERE phase = 'live'}),
	'and then streams');
$node->stop;

# --- a database left without a worker says so -----------------------------
my $small = flusso_node('small');
$small->append_conf('postgresql.conf',
	"max_worker_processes = 2\nmax_logical_replication_workers = 0\n");
$small->restart;
for my $db ('one', 'two')
{
	$small->safe_psql('postgres', "CREATE DATABASE $db");
	$small->safe_psql($db, q{CREATE EXTENSION flusso; CREATE TABLE t (id int PRIMARY KEY);
		SELECT flusso_create_index('t', 'version: 1
table: t
fields: []')});
}
ok( $small->poll_query_until(
		'postgres', q{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'flusso worker'}),
	'one worker runs, and no slot is left for a second');
my $without = $small->safe_psql('postgres',
	q{SELECT d FROM unnest(ARRAY['one', 'two']) d WHERE d NOT IN
	  (SELECT datname FROM pg_stat_activity WHERE backend_type = 'flusso worker')});
ok( $small->poll_query_until(
		$without, q{SELECT phase = 'error' AND last_error LIKE '%raise max_worker_processes%' FROM flusso_status()}),
	'the database without a worker says so in flusso_status()')
  or diag("without a worker: '$without'; status: "
	  . join('; ', map { "$_: " . $small->safe_psql($_, q{SELECT string_agg(index || ' ' || phase
		  || ' ' || coalesce(worker_pid::text, '-') || ' ' || coalesce(last_error, '-'), ', ') FROM flusso_status()}) }
		  ('one', 'two')));
$small->stop;

# --- a SQL_ASCII database checks UTF-8 like any other ---------------------------
my $ascii = flusso_node('ascii');
$ascii->safe_psql('postgres',
	q{CREATE DATABASE ascii ENCODING 'SQL_ASCII' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C'});
$ascii->safe_psql('ascii', 'CREATE EXTENSION flusso');
my ($ret, $out, $err) = $ascii->psql('ascii',
	q{SELECT flusso_create_index('x', E'version: 1\ntable: t\nfields:\n  - text: ab\xffc\n    required: true')});
like($err, qr/invalid index definition: line 4, column 13: the definition is not valid UTF-8: byte 0xff at offset 40/,
	'invalid UTF-8 in YAML is reported where it is');
($ret, $out, $err) = $ascii->psql('ascii',
	q{SELECT flusso_create_index('x', E'{"version": 1, "table": "t", "fields": [{"constant": "c", "value": "\xe9t\xe9"}]}')});
like($err, qr/line 1, column 69: the definition is not valid UTF-8: byte 0xe9 at offset 68/,
	'and in JSON, where it would have reached the documents');
is($ascii->safe_psql('ascii', 'SELECT count(*) FROM flusso_indexes'), '0', 'nothing was stored');
$ascii->stop;

done_testing();

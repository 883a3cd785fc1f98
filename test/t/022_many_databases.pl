# Only databases with flusso hold the launcher's entries: with 40 plain
# databases, a restart leaves the one with flusso served (before, every
# database took an entry at start, 32 in all, and the database with flusso
# stayed idle with no error while its slot retained WAL).  At the limit,
# flusso.max_databases, a database refused an entry says so loudly — a
# WARNING at every request and flusso_status() call, phase error with the
# setting to raise — and is served as soon as an entry is freed.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('many');

my $index = q{version: 1
table: items
primary_key: id
fields:
  - integer: n
    required: true
};

sub flusso_database
{
	my ($db) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, q{
		CREATE EXTENSION flusso;
		CREATE TABLE items (id int PRIMARY KEY, n int NOT NULL);
	});
	my ($ret, $out, $err) =
	  $node->psql($db, "SELECT flusso_create_index('items', \$\$$index\$\$)");
	is($ret, 0, "index created in $db");
	$node->safe_psql($db, 'SELECT count(*) FROM flusso_provision()');
	return $err;
}

sub streams
{
	my ($db) = @_;
	return $node->poll_query_until(
		$db, q{SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE backend_type = 'flusso worker' AND datname = current_database()
		  AND query = 'streaming'});
}

# --- 40 databases without flusso, then one with it, and a restart -------------
$node->safe_psql('postgres', "CREATE DATABASE plain_$_") for 1 .. 40;
flusso_database('app');
ok(streams('app'), 'the database with flusso streams');
$node->restart;
ok(streams('app'), 'after a restart with 40 other databases, its worker streams again');
$node->safe_psql('app', 'INSERT INTO items SELECT i, i FROM generate_series(1, 100) i');
ok( $node->poll_query_until(
		'app', q{SELECT count(*) = 100 FROM flusso_docs.items}),
	'and the rows written after the restart are applied');
is($node->safe_psql('app', q{SELECT phase FROM flusso_status()}), 'live', 'the index is live');
is( $node->safe_psql('app',
		q{SELECT count(*) FROM pg_replication_slots WHERE NOT active}),
	'0', 'no slot is left without its worker');

# --- at the limit: loud, and served once an entry is free ---------------------
$node->append_conf('postgresql.conf', "flusso.max_databases = 1\n");
$node->restart;
ok(streams('app'), 'with flusso.max_databases = 1, the one database with flusso streams');
my $warning = flusso_database('second');
like($warning, qr/WARNING:  no flusso worker keeps this database up to date/,
	'a second database with flusso is warned at once that no worker serves it');
like($warning, qr/DETAIL:  The 1 entry flusso.max_databases reserves is held by another database with flusso.\nHINT:  Raise flusso.max_databases and restart the server./,
	'with the setting to raise');
my ($ret, $out, $err) = $node->psql('second',
	q{SELECT phase || ': ' || last_error FROM flusso_status()});
is( $out,
	'error: no flusso worker keeps this database up to date: other databases with flusso hold all the entries flusso.max_databases reserves (1); raise flusso.max_databases and restart the server',
	'its flusso_status() is in phase error, with the setting to raise');
like($err, qr/WARNING:  no flusso worker keeps this database up to date/, 'and warns at every call');

my $log = -s $node->logfile;
$node->restart;
ok( $node->poll_query_until(
		'postgres', q{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'flusso worker'}),
	'after a restart, one of the two is served');
my $refused = $node->safe_psql('postgres',
	q{SELECT d FROM unnest(ARRAY['app', 'second']) d WHERE d NOT IN
	  (SELECT datname FROM pg_stat_activity WHERE backend_type = 'flusso worker')});
my $served = $refused eq 'app' ? 'second' : 'app';
ok( $node->wait_for_log(qr/WARNING:  no flusso worker keeps database "$refused" up to date/, $log),
	'the probe of the other one logs a WARNING');
is($node->safe_psql($refused, q{SELECT phase FROM flusso_status()}),
	'error', 'and its index is in phase error');

# the served one lets flusso go: its entry is freed, the other takes it
$node->safe_psql($served, 'DROP EXTENSION flusso CASCADE');
ok(streams($refused), 'once the entry is freed, the refused database is served');
is($node->safe_psql($refused, q{SELECT phase FROM flusso_status()}), 'live', 'and its index is live');

$node->stop;
done_testing();

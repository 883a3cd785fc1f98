# A streaming standby is promoted while the library is written to.  On 17
# and later the worker's slot is a failover slot the standby syncs, so the
# new primary's worker goes on from the synced slot: no index is seeded
# again.  On 15 and 16 the promoted standby has no logical slot: the worker
# says so and seeds every index again.  Either way, once caught up every
# document equals a fresh build, with the changes committed before and
# after the promotion.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time);
use FlussoTest;

my $primary = flusso_node('primary');
my $failover_slots = $primary->pg_version >= 17;
$primary->safe_psql('postgres',
	q{SELECT pg_create_physical_replication_slot('standby_slot')});
if ($failover_slots)
{
	# logical changes reach flusso only once the standby has them
	$primary->append_conf('postgresql.conf',
		"synchronized_standby_slots = 'standby_slot'\n");
	$primary->reload;
}
ok(streaming_library($primary), 'the primary streams the library');
my $oid = $primary->safe_psql('library',
	q{SELECT oid FROM pg_database WHERE datname = 'library'});
my $slot = "flusso_$oid";
if ($failover_slots)
{
	is( $primary->safe_psql('postgres',
			"SELECT failover FROM pg_replication_slots WHERE slot_name = '$slot'"),
		't', 'the worker made a failover slot');
}

$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "primary_slot_name = 'standby_slot'\n"
	  . "hot_standby_feedback = on\n");
if ($failover_slots)
{
	# the slot sync worker needs a database in primary_conninfo
	# and the primary's synchronized_standby_slots, copied with its
	# configuration, names no slot the standby has
	$standby->append_conf('postgresql.conf',
		"sync_replication_slots = on\n"
		  . "synchronized_standby_slots = ''\n"
		  . "primary_conninfo = 'port=" . $primary->port . " host=" . $primary->host
		  . " dbname=postgres'\n");
}
$standby->start;

if ($failover_slots)
{
	ok( $standby->poll_query_until(
			'postgres',
			"SELECT synced FROM pg_replication_slots WHERE slot_name = '$slot'"),
		'the standby syncs the worker\'s slot');
	like(
		$primary->safe_psql('library',
			q{SELECT path || ': ' || message FROM flusso_check() WHERE path = 'slot'}),
		qr/^$/,
		'check has nothing to say of a failover slot a standby syncs');
}

# the library's random workload, less its TRUNCATE, which seeds an index
# again by design: here only a lost slot may
sub workload_sql
{
	(my $sql = library_workload(@_)) =~ s/TRUNCATE loans;//g;
	return $sql;
}

# changes before the promotion, the last ones in flight when the primary stops
$primary->safe_psql('library', workload_sql(1000, '', 0));
ok(library_caught_up($primary), 'the primary\'s worker caught up');
if ($failover_slots)
{
	# the synced slot has moved on with the primary's
	my $confirmed = $primary->safe_psql('postgres',
		"SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '$slot'");
	ok( $standby->poll_query_until(
			'postgres',
			"SELECT confirmed_flush_lsn >= '$confirmed' FROM pg_replication_slots WHERE slot_name = '$slot'"),
		'the synced slot follows the worker\'s');
}
my $in_flight = "$PostgreSQL::Test::Utils::tmp_check/in_flight.sql";
append_to_file($in_flight, workload_sql(3000, '', 0));
my ($out, $err) = ('', '');
my $workload = IPC::Run::start(
	[ 'psql', '-X', '-q', '-d', $primary->connstr('library'), '-f', $in_flight ],
	'>', \$out, '2>', \$err);
$primary->poll_query_until('library', 'SELECT count(*) > 0 FROM loans WHERE id > 3')
  or die 'the workload does not start';
$primary->stop('immediate');
$workload->finish;

my $promoted_at = time;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby was not promoted';

# and after it, on the new primary
$standby->safe_psql('library', workload_sql(500, '', 0));
ok(library_caught_up($standby), 'the new primary\'s worker caught up');
my $to_live = time - $promoted_at;
note sprintf('promotion to live and caught up: %.1f s', $to_live);

for my $index ('books', 'authors')
{
	is( $standby->safe_psql('library',
			"SELECT string_agg(id || ' ' || problem, ', ') FROM flusso_verify('$index')"),
		'', "every $index document equals a fresh build after the promotion");
}

if ($failover_slots)
{
	# the new primary has no standby: check says so, and says which setting
	# would hold every change back
	is( $standby->safe_psql('library',
			q{SELECT severity || ': ' || message FROM flusso_check() WHERE path = 'slot'}),
		qq{info: no standby is named in synchronized_standby_slots, so none is known to sync replication slot "$slot"},
		'check: no standby is named to sync the slot');
	$standby->append_conf('postgresql.conf', "synchronized_standby_slots = 'gone'\n");
	$standby->reload;
	# (polled: a new session sees the reloaded setting once the postmaster has)
	ok( $standby->poll_query_until(
			'library',
			q{SELECT string_agg(severity || ': ' || message, '; ') FROM flusso_check()
			  WHERE path = 'synchronized_standby_slots'},
			'error: synchronized_standby_slots names replication slot "gone", which does not exist, so the worker applies no change'),
		'check: a standby slot that does not exist holds every change back');
	$standby->append_conf('postgresql.conf', "synchronized_standby_slots = ''\n");
	$standby->reload;
}

# the standby's log begins with recovery: its worker started at the promotion
my $log = slurp_file($standby->logfile);
my $seeds = () = $log =~ /flusso: seeding index/g;
if ($failover_slots)
{
	is($seeds, 0, 'no index was seeded again');
	unlike($log, qr/was missing or invalidated and has been created again/,
		'the worker went on from the synced slot');
}
else
{
	is($seeds, 2, 'both indexes were seeded again');
	like($log, qr/replication slot "$slot" was missing or invalidated and has been created again/,
		'the worker said the slot was missing');
}

done_testing();

# Two indexes of one database seed side by side, up to flusso.max_seeds
# (2 by default): both seeds begin before either ends, each chunk sized to
# a share of the worker's turn, and a third index's live changes keep
# reaching its documents within about a second meanwhile.  With
# flusso.max_seeds = 1 they seed one after the other.  Every document
# equals a fresh build afterwards.

use strict;
use warnings;

use Time::HiRes qw(time usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('side_by_side');
$node->append_conf('postgresql.conf', "flusso.snapshot_chunk_size = 2000\n");
$node->restart;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', q{
CREATE EXTENSION flusso;
CREATE TABLE live (id int PRIMARY KEY, label text NOT NULL);
INSERT INTO live SELECT g, 'live ' || g FROM generate_series(1, 10) g;
CREATE TABLE a (id int PRIMARY KEY, label text NOT NULL);
CREATE TABLE b (id int PRIMARY KEY, label text NOT NULL);
INSERT INTO a SELECT g, repeat('a', 200) || g FROM generate_series(1, 150000) g;
INSERT INTO b SELECT g, repeat('b', 200) || g FROM generate_series(1, 150000) g;
SELECT flusso_create_index('live', E'version: 1\ntable: live\nfields:\n  - text: label\n    required: true');
SELECT count(*) FROM flusso_provision();
});
ok(database_caught_up($node, 'app'), 'the live index is seeded and streams');

sub log_lines
{
	my ($from) = @_;
	return substr(slurp_file($node->logfile), $from);
}

# The order, in the log since $from, of the seeds of a and b beginning
# ("a+") and ending ("a.").
sub seed_order
{
	my ($from) = @_;
	my @events;
	for my $line (split /\n/, log_lines($from))
	{
		push @events, "$1+" if $line =~ /flusso: seeding index "(a|b)"/;
		push @events, "$1." if $line =~ /flusso: index "(a|b)" seeded/;
	}
	return join(' ', @events);
}

# Change the live index's row again and again while the seeds run: the
# longest any change took to reach its document.
sub live_latency
{
	my ($seeding) = @_;
	my ($longest, $changes) = (0, 0);
	my $i = 0;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while ($seeding->() && time < $deadline)
	{
		$i++;
		my $start = time;
		$node->safe_psql('app', "UPDATE live SET label = 'changed $i' WHERE id = 1");
		poll_until(sub {
			$node->safe_psql('app', q{SELECT doc->>'label' FROM flusso_docs.live WHERE id = '1'}) eq "changed $i"
		}) or return -1;
		my $took = time - $start;
		$longest = $took if $took > $longest;
		$changes++;
	}
	return ($longest, $changes);
}

sub both_seeded
{
	return $node->safe_psql('app', q{SELECT count(*) FROM flusso.index WHERE name IN ('a', 'b') AND NOT needs_seed}) eq '2';
}

# side by side
my $from = -s $node->logfile;
$node->safe_psql('app', q{
BEGIN;
SELECT flusso_create_index('a', E'version: 1\ntable: a\nfields:\n  - text: label\n    required: true');
SELECT flusso_create_index('b', E'version: 1\ntable: b\nfields:\n  - text: label\n    required: true');
SELECT count(*) FROM flusso_provision();
COMMIT;
});
my ($longest, $changes) = live_latency(sub { !both_seeded() });
ok(poll_until(\&both_seeded), 'both indexes are seeded');
like(seed_order($from), qr/^[ab]\+ [ab]\+ [ab]\. [ab]\.$/, 'the second seed began before the first ended: ' . seed_order($from));
cmp_ok($changes, '>', 0, "the live index was changed while they seeded ($changes times)");
cmp_ok($longest, '<', 2.5, sprintf('no live change waited more than about a second for its document (longest %.2f s)', $longest));
ok(database_caught_up($node, 'app'), 'caught up');
is($node->safe_psql('app', q{SELECT (SELECT count(*) FROM flusso_verify('a')) + (SELECT count(*) FROM flusso_verify('b'))}),
	'0', 'every document equals a fresh build');
is($node->safe_psql('app', q{SELECT (SELECT count(*) FROM flusso_docs.a) + (SELECT count(*) FROM flusso_docs.b)}),
	'300000', 'and every root row has one');

# one at a time
$node->safe_psql('app', 'ALTER SYSTEM SET flusso.max_seeds = 1');
$node->reload;
$from = -s $node->logfile;
$node->safe_psql('app', q{SELECT flusso_resnapshot('a'), flusso_resnapshot('b')});
ok(poll_until(sub { seed_order($from) =~ /^([ab])\+ \1\. ([ab])\+ \2\.$/ }),
	'with flusso.max_seeds = 1 they seed one after the other: ' . seed_order($from));
ok(database_caught_up($node, 'app'), 'caught up');
is($node->safe_psql('app', q{SELECT (SELECT count(*) FROM flusso_verify('a')) + (SELECT count(*) FROM flusso_verify('b'))}),
	'0', 'every document equals a fresh build again');

$node->stop;
done_testing();

# A table an index reads replaced under its name never leaves the index
# live and stale.  Swapped by rename, as migrations and online rebuilds
# do, the new table outside the publication: the index says so in phase
# error within a turn, and once provisioned follows the new table (seeded
# again, later updates reach the documents).  Swapped with the publication
# covering the new table: followed at once, and no flusso_wait() says true
# until the index is seeded from it.  Dropped and created again:
# followed.  Renamed away for good: phase error.  CREATE TABLE IF NOT
# EXISTS on the table that is there changes nothing.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('replaced');
things_database($node, 'shop');
ok(database_caught_up($node, 'shop'), 'the things index is live');

my $status = q{SELECT phase || ': ' || coalesce(last_error, '') FROM flusso_status() WHERE index = 'things'};
my $replaced = "a table this index reads was replaced under its name";

# The swap of the issue: rename, create alike, copy, in one transaction.
my $offset = -s $node->logfile;
$node->safe_psql('shop', q{BEGIN;
	ALTER TABLE things RENAME TO things_old;
	CREATE TABLE things (LIKE things_old INCLUDING ALL);
	INSERT INTO things SELECT * FROM things_old;
	COMMIT;});
ok( $node->poll_query_until('shop', qq{SELECT phase = 'error' AND last_error =
		'waiting to seed: publication "flusso" does not publish table public.things'
		FROM flusso_status() WHERE index = 'things'}),
	'swapped outside the publication: the index says so in phase error');
ok($node->wait_for_log(qr/index "things": \Q$replaced\E/, $offset), 'the log says the table was replaced');
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_check() WHERE index = 'things' AND severity = 'error'
	AND message = 'table "public.things" is not in publication "flusso"'}),
	'1', 'flusso_check() says what to provision');
$node->safe_psql('shop', q{UPDATE things SET label = 'after the swap ' || id WHERE id <= 10});
$node->safe_psql('shop', 'SELECT count(*) FROM flusso_provision()');
ok(database_caught_up($node, 'shop'), 'provisioned, the index is seeded again and live');
$node->safe_psql('shop', q{UPDATE things SET label = 'updated later ' || id WHERE id BETWEEN 11 AND 20});
ok(database_caught_up($node, 'shop'), 'and follows the new table');
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_verify('things')}), '0',
	'every document equals a build from the new table');
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_docs.things
	WHERE doc->>'label' LIKE 'after the swap %' OR doc->>'label' LIKE 'updated later %'}),
	'20', 'the updates made to the new table are in the documents');

# Dropping the old table, which no index reads now, changes nothing.
$offset = -s $node->logfile;
$node->safe_psql('shop', 'DROP TABLE things_old');
ok(database_caught_up($node, 'shop'), 'the index stays live once the old table is dropped');

# A swap that puts the new table in the publication in the same
# transaction: the index follows at once.
$node->safe_psql('shop', q{BEGIN;
	ALTER TABLE things RENAME TO things_old;
	CREATE TABLE things (LIKE things_old INCLUDING ALL);
	INSERT INTO things SELECT id, 'swapped again ' || id FROM things_old;
	ALTER PUBLICATION flusso ADD TABLE things;
	COMMIT;});
$node->safe_psql('shop', q{UPDATE things SET label = 'after the second swap' WHERE id = 1});
ok( $node->poll_query_until('shop', q{SELECT doc->>'label' = 'after the second swap'
		AND (SELECT count(*) FROM flusso_docs.things WHERE doc->>'label' LIKE 'swapped again %') = 49
		FROM flusso_docs.things WHERE id = '1'}),
	'swapped within the publication, the index follows the new table');
ok(database_caught_up($node, 'shop'), 'live');
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_verify('things')}), '0', 'and verified');
ok($node->log_contains(qr/index "things": \Q$replaced\E/, $offset), 'the log says the table was replaced');
$node->safe_psql('shop', 'DROP TABLE things_old');

# Swapped within the publication, the new table updated at once, and
# waited for, six times: no flusso_wait() says true while the document
# still comes from the old table; once seeded from the new one, it does.
my ($early, $right) = (0, 0);
for my $round (1 .. 6)
{
	$node->safe_psql('shop', qq{BEGIN;
		ALTER TABLE things RENAME TO things_old;
		CREATE TABLE things (LIKE things_old INCLUDING ALL);
		INSERT INTO things SELECT id, 'round $round ' || id FROM things_old;
		ALTER PUBLICATION flusso ADD TABLE things;
		COMMIT;});
	$node->safe_psql('shop', "UPDATE things SET label = 'waited $round' WHERE id = 1");
	my $waited = $node->safe_psql('shop', q{SELECT flusso_wait('things', '10s')});
	my $label = $node->safe_psql('shop', q{SELECT doc->>'label' FROM flusso_docs.things WHERE id = '1'});
	$early++ if $waited eq 't' && $label ne "waited $round";
	database_caught_up($node, 'shop');
	$waited = $node->safe_psql('shop', q{SELECT flusso_wait('things', '10s')});
	$label = $node->safe_psql('shop', q{SELECT doc->>'label' FROM flusso_docs.things WHERE id = '1'});
	$right++ if $waited eq 't' && $label eq "waited $round";
	$node->safe_psql('shop', 'DROP TABLE things_old');
}
is($early, 0, 'no wait said true while the document came from the old table (6 swaps)');
is($right, 6, 'and once seeded from the new table, every wait says true, rightly');

# Dropped and created again, in the publication.
$node->safe_psql('shop', q{BEGIN;
	DROP TABLE things;
	CREATE TABLE things (id int PRIMARY KEY, label text NOT NULL);
	INSERT INTO things SELECT g, 'created anew ' || g FROM generate_series(1, 30) g;
	ALTER PUBLICATION flusso ADD TABLE things;
	COMMIT;});
ok( $node->poll_query_until('shop', q{SELECT count(*) = 30 AND bool_and(doc->>'label' LIKE 'created anew %')
		FROM flusso_docs.things}),
	'dropped and created again: the index follows the new table');
ok(database_caught_up($node, 'shop'), 'live');
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_verify('things')}), '0', 'and verified');

# CREATE TABLE IF NOT EXISTS finds the table there: nothing is replaced.
$offset = -s $node->logfile;
$node->safe_psql('shop', q{CREATE TABLE IF NOT EXISTS things (id int PRIMARY KEY, label text NOT NULL)});
$node->safe_psql('shop', q{UPDATE things SET label = 'still followed' WHERE id = 2});
ok(database_caught_up($node, 'shop'), 'caught up past CREATE TABLE IF NOT EXISTS');
ok(!$node->log_contains(qr/\Q$replaced\E/, $offset), 'which replaced nothing');
is($node->safe_psql('shop', q{SELECT doc->>'label' FROM flusso_docs.things WHERE id = '2'}),
	'still followed', 'the index goes on following the table');

# Renamed away for good: the index cannot read its table.
$node->safe_psql('shop', 'ALTER TABLE things RENAME TO things_gone');
ok( $node->poll_query_until('shop', q{SELECT phase = 'error' FROM flusso_status() WHERE index = 'things'}),
	'renamed away, the index is in phase error');
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_check() WHERE index = 'things' AND severity = 'error'
	AND message LIKE '%things%does not exist%'}),
	'1', 'flusso_check() says the table is missing');

$node->stop;
done_testing();

# flusso_resnapshot(name, predicate => ...) and (name, ids => ...) rebuild
# those documents alone, in place, beside live changes: documents altered
# behind flusso's back in the table sink are made right for the rows the
# predicate selects or the ids named, and only for those; no seed runs
# and the served documents never go missing.  A predicate that fails as
# the worker reads it rebuilds nothing, is said in flusso_status(), and
# the index goes on.  A crash after the request was read, and its row
# deleted, before the slot was confirmed reads it again from the stream.

use strict;
use warnings;

use Time::HiRes qw(usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('partial');
$node->append_conf('postgresql.conf', "restart_after_crash = on\n");
$node->restart;
things_database($node, 'app');
ok(database_caught_up($node, 'app'), 'the things index is seeded and streams');

# Every document altered by hand: what a rebuild makes right shows.
sub spoil
{
	$node->safe_psql('app',
		q{UPDATE flusso_docs.things SET doc = jsonb_set(doc, '{label}', '"spoiled"')});
}

# The ids whose document is right, in order.
sub right_ids
{
	return $node->safe_psql('app',
		q{SELECT coalesce(string_agg(d.id, ',' ORDER BY d.id::int), '') FROM flusso_docs.things d
		  JOIN things t ON t.id::text = d.id WHERE d.doc->>'label' = t.label});
}

sub seeds_logged
{
	my @seeds = slurp_file($node->logfile) =~ /flusso: index "things" seeded/g;
	return scalar @seeds;
}

my $seeds = seeds_logged();
spoil();
$node->safe_psql('app', q{SELECT flusso_resnapshot('things', predicate => 'id BETWEEN 3 AND 7 OR label = ''thing 42''')});
is($node->safe_psql('app', q{SELECT flusso_wait('things', '60s')}), 't',
	'flusso_wait() returns once the rebuild asked for before it is done');
is(right_ids(), '3,4,5,6,7,42', 'the documents of the rows the predicate selects are rebuilt, and only those');
is($node->safe_psql('app', q{SELECT count(*) FROM flusso_docs.things}), '50', 'no document went missing');
is($node->safe_psql('app', q{SELECT count(*) FROM flusso.signal}), '0', 'the request is forgotten once acted on');

# By ids, beside a live change: an id without a row builds nothing.
$node->safe_psql('app', q{
BEGIN;
SELECT flusso_resnapshot('things', ids => ARRAY['10', '11', '999']);
UPDATE things SET label = 'relabelled' WHERE id = 20;
COMMIT;
});
is($node->safe_psql('app', q{SELECT flusso_wait('things', '60s')}), 't', 'the rebuild by ids is waited for');
is(right_ids(), '3,4,5,6,7,10,11,20,42', 'the documents named are rebuilt, beside the live change');
is($node->safe_psql('app', q{SELECT count(*) FROM flusso_docs.things WHERE id = '999'}), '0',
	'an id without a row has no document');
is(seeds_logged(), $seeds, 'no seed ran');
is($node->safe_psql('app', q{SELECT phase FROM flusso_status() WHERE index = 'things'}), 'live',
	'the index stayed live');

# A predicate that fails as the worker reads it: nothing is rebuilt, the
# reason is in flusso_status(), the index goes on.
$node->safe_psql('app', q{SELECT flusso_resnapshot('things', predicate => '1 / (id - id) = 1')});
ok( $node->poll_query_until('app',
		q{SELECT last_error LIKE '%index "things": the documents a re-snapshot asked for were not rebuilt: an error with SQLSTATE 22012%' FROM flusso_status() WHERE index = 'things'}),
	'a predicate that fails is said in flusso_status(), by its SQLSTATE');
ok($node->log_contains(qr/LOG:  flusso index "things": a partial re-snapshot failed: division by zero/),
	'and logged whole');
$node->safe_psql('app', q{UPDATE things SET label = 'after the failure' WHERE id = 30});
is($node->safe_psql('app', q{SELECT flusso_wait('things', '60s')}), 't', 'the index goes on');
is(right_ids(), '3,4,5,6,7,10,11,20,30,42', 'nothing was rebuilt for it');
is($node->safe_psql('app', q{SELECT count(*) FROM flusso.signal}), '0', 'the failed request is forgotten');

# A field added to the definition: taken in place, every document rebuilt,
# and flusso_wait() in the same session waits through the worker's
# restart to compile it, returning true once they are.
is( $node->safe_psql('app', q{SELECT flusso_create_index('things', $$
version: 1
table: things
primary_key: id
fields:
  - text: label
    required: true
  - integer: number
    column: id
    required: true
$$, replace => true);
SELECT flusso_wait('things', '60s')}), "\nt", 'a field added in place is waited for through the worker\'s restart');
is($node->safe_psql('app', q{SELECT count(*) FROM flusso_docs.things WHERE (doc->>'number')::int = id::int}), '50',
	'every document has it');
is(right_ids(), join(',', 1 .. 50), 'and was rebuilt from its row');
is(seeds_logged(), $seeds, 'with no seed');

# A crash after the batch that read the request committed (its row
# deleted, its documents built), before the slot was confirmed: the
# request is read again from the stream, and acted on again.
SKIP:
{
	skip 'flusso was built without FLUSSO_TEST_HOOKS', 4
	  unless has_test_hook($node, 'app', 'flusso.test_crash_file');
	spoil();
	my $crash_file = arm_crash_file($node, 'app', 'flusso.test_crash_file', 'partial_crash_once');
	my $acted = () = slurp_file($node->logfile) =~ /documents of index "things" are to be rebuilt/g;
	$node->safe_psql('app', q{SELECT flusso_resnapshot('things', predicate => 'id > 45')});
	my $crashed = 0;
	for (1 .. 600)
	{
		last if ($crashed = !-e $crash_file);
		usleep(100_000);
	}
	ok($crashed, 'the injected crash happened');
	my $again = 0;
	for (1 .. 1200)
	{
		my $now = () = slurp_file($node->logfile) =~ /documents of index "things" are to be rebuilt/g;
		last if ($again = $now >= $acted + 2);
		usleep(100_000);
	}
	ok($again, 'the request was read again from the stream after the crash');
	$node->safe_psql('app', 'ALTER SYSTEM RESET flusso.test_crash_file');
	$node->reload;
	ok(database_caught_up($node, 'app'), 'the worker catches up after the crash');
	# (what the worker replays after a crash starts at the slot's last saved
# position: requests read before it may be acted on again, which only
# rebuilds their documents once more)
like(right_ids(), qr/(^|,)46,47,48,49,50$/, 'the documents it names are rebuilt');
}

$node->stop;
done_testing();

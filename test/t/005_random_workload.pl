# A random workload over every table of the library fixture — child
# deletes, re-parenting, soft delete on and off, rows entering and leaving
# filters, many_to_many far-side renames, belongs_to targets changed and
# deleted, multi-statement transactions, TRUNCATE — then, once the worker
# has caught up, every stored document equals a fresh build.  Run three
# ways: transactions of a few statements, the same with synchronous_commit
# off, and one large transaction; then again with every table's old rows
# logged whole (REPLICA IDENTITY FULL).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('workload');
ok(streaming_library($node), 'the library indexes are defined and the worker streams');

srand(20261129);

sub workload
{
	$node->safe_psql('library', library_workload(@_));
}

sub caught_up_and_verified
{
	my ($name) = @_;
	ok(library_caught_up($node), "$name: the worker caught up");
	for my $index ('books', 'authors')
	{
		is( $node->safe_psql('library',
				"SELECT string_agg(id || ' ' || problem, ', ') FROM flusso_verify('$index')"),
			'', "$name: every $index document equals a fresh build");
	}
}

caught_up_and_verified('before the workload');
workload(2000, '', 0);
caught_up_and_verified('2000 statements in short transactions');
workload(500, 'SET synchronous_commit = off;', 0);
caught_up_and_verified('500 more with synchronous_commit off');
workload(500, '', 1);
caught_up_and_verified('500 more in one transaction');

# Every table logging its old rows whole: an UPDATE that changes no column
# an index reads is then not emitted at all (src/cdc/plugin.c), which must
# not leave a document stale.
$node->safe_psql(
	'library', q{DO $$DECLARE t regclass;
	BEGIN
		FOR t IN SELECT oid FROM pg_class WHERE relnamespace = 'public'::regnamespace
				 AND relkind IN ('r', 'p') LOOP
			EXECUTE format('ALTER TABLE %s REPLICA IDENTITY FULL', t);
		END LOOP;
	END$$});
workload(1000, '', 0);
caught_up_and_verified('1000 more, every table with REPLICA IDENTITY FULL');

is($node->safe_psql('library', q{SELECT last_error IS NULL FROM flusso_status() LIMIT 1}),
	't', 'no error on the way');
cmp_ok($node->safe_psql('library', q{SELECT changes_captured FROM flusso_status() LIMIT 1}),
	'>', 2000, 'after more than 2000 captured changes');
is( $node->safe_psql('library',
		q{SELECT (SELECT count(*) FROM flusso_docs.books) = (SELECT count(*) FROM books WHERE NOT withdrawn)}),
	't', 'one document per book that is not withdrawn');

done_testing();

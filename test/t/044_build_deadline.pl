# flusso.build_timeout holds whatever the user's code does with the
# cancel.  A flusso_admin member's indexes call, from a raw filter, a
# PL/pgSQL function that catches query_canceled: once, returning true
# (the build returns past its deadline: it is taken as timed out, its
# writes rolled back, and the index set aside), or in a loop that never
# ends (the cancel is sent again and again, and a second past the
# deadline the worker exits to end it; the next worker sets the index
# aside at once, saying why).  Another owner's change waits no more than
# that, and later ones not at all.  The same in the shipper, for an index
# that ships to OpenSearch alone: the shipper exits, the next one stops
# that index's shipping, and the other index's changes reach OpenSearch.
# A fixed function and flusso_resnapshot() / flusso_retry_rejected()
# bring the indexes back.

use strict;
use warnings;

use Time::HiRes qw(time usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available();

my $os = OpenSearchNode->start('deadline');
my $node = flusso_node('deadline');
$node->append_conf('postgresql.conf', "flusso.build_timeout = '2s'\n");
$node->restart;
my $url = $os->url;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', qq{
CREATE EXTENSION flusso;
CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$url', index_prefix 'd-', request_timeout '10');
CREATE TABLE users (id int PRIMARY KEY, name text NOT NULL);
INSERT INTO users SELECT g, 'user ' || g FROM generate_series(1, 1000) g;
SELECT flusso_create_index('users', \$\$
version: 1
table: users
primary_key: id
fields:
  - text: name
    required: true
\$\$);
SELECT flusso_set_sinks('users', ARRAY['table', 'search']);
CREATE ROLE mallory LOGIN;
GRANT flusso_admin TO mallory;
GRANT CREATE ON SCHEMA public TO mallory;
GRANT USAGE ON FOREIGN SERVER search TO mallory;
});
# Her functions: one catches the cancel once and returns, one never
# lets go.  Her tables are empty when the indexes are seeded.
$node->safe_psql('app', q{
SET ROLE mallory;
CREATE FUNCTION catch_once() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_sleep(30);
	RETURN true;
EXCEPTION WHEN query_canceled THEN
	RETURN true;
END
$$;
CREATE FUNCTION never_let_go() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	LOOP
		BEGIN
			PERFORM pg_sleep(1);
		EXCEPTION WHEN query_canceled THEN
			NULL;
		END;
	END LOOP;
END
$$;
CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL);
CREATE TABLE memos (id int PRIMARY KEY, body text NOT NULL);
CREATE TABLE drafts (id int PRIMARY KEY, body text NOT NULL);
});
# caught calls catch_once(), stall and stall_search (OpenSearch alone) never_let_go()
for my $index ([ 'caught', 'drafts', 'catch_once' ], [ 'stall', 'notes', 'never_let_go' ],
	[ 'stall_search', 'memos', 'never_let_go' ])
{
	my ($name, $table, $function) = @$index;
	$node->safe_psql('app', qq{SET ROLE mallory; SELECT flusso_create_index('$name', \$\$
version: 1
table: $table
primary_key: id
filters:
  - { raw: "public.$function()" }
fields:
  - text: body
    required: true
\$\$)});
}
$node->safe_psql('app', q{SET ROLE mallory; SELECT flusso_set_sinks('stall_search', ARRAY['search'])});
$node->safe_psql('app', 'SELECT count(*) FROM flusso_provision()');
ok(OpenSearchNode::caught_up($node, 'app', 'users'), 'every index is seeded');
is($node->safe_psql('app', q{SELECT string_agg(index || ' ' || phase, ', ' ORDER BY index) FROM flusso_status()}),
	'caught live, stall live, stall_search live, users live', 'and live');

# A user's change, then how long until the users documents have it.
sub rename_user
{
	my ($id, $name, $in_opensearch) = @_;
	my $began = time;
	$node->safe_psql('app', "UPDATE users SET name = '$name' WHERE id = $id");
	poll_until(sub {
		if ($in_opensearch)
		{
			my ($status, $doc) = $os->request('GET', "/d-users/_doc/$id");
			return $status == 200 && $doc->{_source}{name} eq $name;
		}
		return $node->safe_psql('app', "SELECT doc->>'name' FROM flusso_docs.users WHERE id = '$id'") eq $name;
	}) or return undef;
	return time - $began;
}

# 1. A build that catches the cancel and returns past its deadline: timed
# out all the same, its document not written.
$node->safe_psql('app', q{SET ROLE mallory; INSERT INTO drafts VALUES (1, 'a draft')});
ok( $node->poll_query_until('app', q{SELECT phase = 'error' AND last_error LIKE
		'building this index took longer than flusso.build_timeout (2000 ms), and was canceled; the index is set aside%'
		FROM flusso_status() WHERE index = 'caught'}),
	'a build returning past its deadline, the cancel caught, sets its index aside');
is($node->safe_psql('app', q{SELECT count(*) FROM flusso_docs.caught}), '0',
	'and what it built is not written');

# 2. A build that never lets go, in the worker: it exits a second past the
# deadline, and the next worker sets the index aside at once.
my $worker = $node->safe_psql('app', q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso worker'});
$node->safe_psql('app', q{SET ROLE mallory; INSERT INTO notes VALUES (1, 'a note')});
my $delay = rename_user(42, 'while the worker is held');
ok(defined $delay, "another owner's change reaches its documents");
cmp_ok($delay // 999, '<', 5.5,
	sprintf('within the 2 s build_timeout, a second past it and a restart (%.2f s)', $delay // 999));
ok( $node->poll_query_until('app', q{SELECT phase = 'error' AND last_error =
		'building this index ran past flusso.build_timeout (2000 ms) and would not end when canceled (a function it calls catches the cancel), so the worker exited to end it; the index is set aside until its definition is replaced or flusso_resnapshot() is called'
		FROM flusso_status() WHERE index = 'stall'}),
	'the index whose build would not end is set aside, saying why');
ok($node->log_contains(qr/flusso index "stall": a build ran past flusso.build_timeout \(2000 ms\) and would not end when canceled: the worker exits to end it/),
	'the log says why the worker exited');
my $restarted = $node->safe_psql('app', q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso worker'});
isnt($restarted, $worker, 'a new worker runs');
my $slowest = 0;
for my $i (1 .. 5)
{
	my $took = rename_user(100 + $i, "renamed $i") // 999;
	$slowest = $took if $took > $slowest;
}
cmp_ok($slowest, '<', 1, sprintf('later changes of the users index each within a second (slowest %.2f s)', $slowest));
is($node->safe_psql('app', q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso worker'}), $restarted,
	'and the worker is not held again');

# 3. The same in the shipper, for an index that ships to OpenSearch alone
# (the worker queues its ids without building them).
my $shipper = $node->safe_psql('app', q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso shipper'});
$node->safe_psql('app', q{SET ROLE mallory; INSERT INTO memos VALUES (1, 'a memo')});
$delay = rename_user(43, 'while the shipper is held', 1);
ok(defined $delay, "another owner's change reaches OpenSearch");
cmp_ok($delay // 999, '<', 5.5, sprintf('within a second past the deadline and a restart (%.2f s)', $delay // 999));
ok( $node->poll_query_until('app', q{SELECT phase = 'error' AND ship_error =
		'building documents to ship ran past flusso.build_timeout (2000 ms) and would not end when canceled (a function the index''s definition calls catches the cancel), so the shipper exited to end it; shipping is stopped: fix the definition, then call flusso_retry_rejected(''stall_search'')'
		FROM flusso_status() WHERE index = 'stall_search'}),
	'its shipping is stopped, saying why');
isnt($node->safe_psql('app', q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso shipper'}), $shipper,
	'a new shipper runs');
$slowest = 0;
for my $i (1 .. 5)
{
	my $took = rename_user(200 + $i, "shipped $i", 1) // 999;
	$slowest = $took if $took > $slowest;
}
cmp_ok($slowest, '<', 1.5, sprintf('later changes each reach OpenSearch promptly (slowest %.2f s)', $slowest));

# 4. Fixed, and asked for again: both come back with what they missed.
$node->safe_psql('app', q{SET ROLE mallory;
CREATE OR REPLACE FUNCTION never_let_go() RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OR REPLACE FUNCTION catch_once() RETURNS boolean LANGUAGE sql AS 'SELECT true';
SELECT flusso_resnapshot('stall'), flusso_resnapshot('caught'), flusso_retry_rejected('stall_search')});
ok(OpenSearchNode::caught_up($node, 'app', 'stall_search'), 'the OpenSearch-only index ships again');
ok(database_caught_up($node, 'app'), 'the indexes set aside are seeded again');
is($node->safe_psql('app', q{SELECT (SELECT doc->>'body' FROM flusso_docs.stall WHERE id = '1')
		|| ', ' || (SELECT doc->>'body' FROM flusso_docs.caught WHERE id = '1')}),
	'a note, a draft', 'with the rows they missed');
my ($status, $memo) = $os->request('GET', '/d-stall_search/_doc/1');
is($memo && $memo->{_source}{body}, 'a memo', 'in OpenSearch too');
is($node->safe_psql('app', q{SELECT (SELECT count(*) FROM flusso_verify('users'))
		+ (SELECT count(*) FROM flusso_verify('stall')) + (SELECT count(*) FROM flusso_verify('stall_search'))}),
	'0', 'every index verifies clean');

$node->stop;
done_testing();

# flusso_wait() against a real OpenSearch node: a session that commits and
# waits finds its change with a realtime GET every time, and with
# searchable => true finds it with _search every time, though the index
# refreshes only once a second by itself (flusso refreshes once for every
# session waiting then).  It returns false at once, with a NOTICE saying
# why, while shipping fails (an outage, a node killed while a session
# waits), while documents are quarantined as rejected, and while shipping
# is stopped by on_error 'stop'; and true again once each is over.

use strict;
use warnings;

use IPC::Run;
use JSON::PP;
use Time::HiRes qw(time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available('python3');

my $os = OpenSearchNode->start('wait_os');
my $proxy = FaultProxy->start($os);
my $node = flusso_node('wait_os');
things_database($node, 'shop');
$node->safe_psql('shop', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '@{[ $proxy->url ]}', index_prefix 'w-', connect_timeout '1', request_timeout '4')});
$node->safe_psql('shop', q{SELECT flusso_set_sinks('things', ARRAY['table', 'search'],
	'{"replicas": 0, "refresh_interval": "1s"}')});
ok(OpenSearchNode::caught_up($node, 'shop', 'things'), 'things is seeded into OpenSearch');

sub label_of
{
	my ($id) = @_;
	my ($status, $body) = $os->request('GET', "/w-things/_doc/$id");
	return $status == 200 ? $body->{_source}{label} : "HTTP $status";
}

sub search_hits
{
	my ($term) = @_;
	my ($status, $body) = $os->request('POST', '/w-things/_search',
		encode_json({ query => { match => { label => $term } } }));
	return $status == 200 ? join(',', map { $_->{_id} } @{ $body->{hits}{hits} }) : "HTTP $status";
}

sub wait_for
{
	my ($sql) = @_;
	my ($stdout, $stderr);
	my $t0 = time;
	$node->psql('shop', $sql, stdout => \$stdout, stderr => \$stderr);
	return ($stdout, $stderr, time - $t0);
}

# Write, wait, GET: the realtime GET sees the change every time.
my ($misses, $t0) = (0, time);
for my $i (1 .. 150)
{
	my $id = 1 + $i % 50;
	my $out = $node->safe_psql('shop',
		"UPDATE things SET label = 'realtime $i' WHERE id = $id;\nSELECT flusso_wait('things', '30s');");
	$misses++ if $out ne 't' || label_of($id) ne "realtime $i";
}
is($misses, 0, sprintf('write, wait, GET: 150 of 150 found their own change (%.1f s)', time - $t0));

# Write, wait until searchable, _search: found every time.
($misses, $t0) = (0, time);
for my $i (1 .. 200)
{
	my $id = 1 + $i % 50;
	my $out = $node->safe_psql('shop',
		"UPDATE things SET label = 'token$i' WHERE id = $id;\n"
		  . "SELECT flusso_wait('things', '30s', searchable => true);");
	$misses++ if $out ne 't' || search_hits("token$i") ne "$id";
}
is($misses, 0, sprintf('write, wait (searchable), _search: 200 of 200 found their own change (%.1f s)', time - $t0));

# An outage: false at once, with the reason; true once it is over.
$proxy->fault('refuse');
$node->safe_psql('shop', q{UPDATE things SET label = 'during the outage' WHERE id = 3});
my ($out, $err, $took) = wait_for(q{SELECT flusso_wait('things', '60s')});
is($out, 'f', 'OpenSearch unreachable: false');
ok($took < 20, sprintf('promptly (%.1f s of 60)', $took));
like($err, qr/DETAIL:  Shipping to OpenSearch is failing/, 'a NOTICE says why');
$proxy->fault('pass');
ok(poll_until(sub { $node->safe_psql('shop', q{SELECT flusso_wait('things', '1s')}) eq 't' }),
	'the outage over: true');
is(label_of(3), 'during the outage', 'and OpenSearch has the change');

# A node killed while a session waits: its bulk hangs, the node dies, the
# session gets false well before its timeout; true once the node is back.
$proxy->fault('hang');
$node->safe_psql('shop', q{UPDATE things SET label = 'before the kill' WHERE id = 4});
my %waiter = (in => "SELECT flusso_wait('things', '120s');\n", out => '', err => '');
$waiter{run} = IPC::Run::start([ 'psql', '-XAtq', '-d', $node->connstr('shop') ],
	'<', \$waiter{in}, '>', \$waiter{out}, '2>', \$waiter{err});
$waiter{run}->pump while length $waiter{in};
ok(poll_until(sub { $node->safe_psql('shop',
		q{SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT flusso_wait%' AND state = 'active'}) eq '1' }),
	'a session waits for the change');
$t0 = time;
$os->kill9;
$waiter{run}->finish;
$took = time - $t0;
is($waiter{out}, "f\n", 'the node killed: the waiting session gets false');
ok($took < 30, sprintf('promptly (%.1f s of 120)', $took));
like($waiter{err}, qr/Shipping to OpenSearch is failing/, 'a NOTICE says why');
$os->restart;
$proxy->fault('pass');
ok(poll_until(sub { $node->safe_psql('shop', q{SELECT flusso_wait('things', '1s')}) eq 't' }),
	'the node back: true');
is(label_of(4), 'before the kill', 'and OpenSearch has the change');

# A new generation seeded (flusso_resnapshot): false while it is on its
# way, since the one served may miss what it is seeded for.
$proxy->fault('slow 2');
$node->safe_psql('shop', q{SELECT flusso_resnapshot('things')});
ok(poll_until(sub { $node->safe_psql('shop', q{SELECT count(*) FROM flusso.opensearch_generation
		WHERE index_name = 'things' AND state IN ('seeding', 'seeded')}) eq '1' }),
	'a new generation is being seeded');
($out, $err, $took) = wait_for(q{SELECT flusso_wait('things', '60s')});
is($out, 'f', 'a new generation on its way: false');
ok($took < 15, sprintf('promptly (%.1f s of 60)', $took));
like($err, qr/DETAIL:  The index is being seeded/, 'a NOTICE says why');
$proxy->fault('pass');
ok(OpenSearchNode::caught_up($node, 'shop', 'things'), 'the new generation is served');
is($node->safe_psql('shop', q{SELECT flusso_wait('things', '30s')}), 't', 'then true');

# Rejected documents: false at once while one is quarantined.
$node->safe_psql('shop', q{
	CREATE TABLE gadgets (id int PRIMARY KEY, addr text);
	INSERT INTO gadgets SELECT g, '10.0.0.' || g FROM generate_series(1, 20) g;
	SELECT flusso_create_index('gadgets', $$
version: 1
table: gadgets
primary_key: id
fields:
  - custom: addr
    postgres: [text]
    opensearch: ip
    required: false
$$);
	SELECT count(*) FROM flusso_provision();
	SELECT flusso_set_sinks('gadgets', ARRAY['search'], '{"replicas": 0}');});
ok(OpenSearchNode::caught_up($node, 'shop', 'gadgets'), 'gadgets is seeded');
is($node->safe_psql('shop', q{SELECT flusso_wait('gadgets', '30s')}), 't', 'gadgets: nothing pending, true');
$node->safe_psql('shop', q{UPDATE gadgets SET addr = 'not an address' WHERE id = 5});
ok($node->poll_query_until('shop', q{SELECT rejected = 1 FROM flusso_status() WHERE index = 'gadgets'}),
	'a document is rejected');
($out, $err, $took) = wait_for(q{SELECT flusso_wait('gadgets', '60s')});
is($out, 'f', 'a document quarantined: false');
ok($took < 10, sprintf('at once (%.1f s of 60)', $took));
like($err, qr/DETAIL:  Documents of the index are quarantined as rejected/, 'a NOTICE says why');
unlike($err, qr/not an address/, 'quoting no value');
$node->safe_psql('shop', q{UPDATE gadgets SET addr = '10.0.0.5' WHERE id = 5});
$node->safe_psql('shop', q{SELECT flusso_retry_rejected('gadgets')});
ok(poll_until(sub { $node->safe_psql('shop', q{SELECT flusso_wait('gadgets', '1s')}) eq 't' }),
	'retried and shipped: true');

# on_error 'stop': false at once while shipping is stopped.
$node->safe_psql('shop', q{SELECT flusso_set_sinks('gadgets', ARRAY['search'], '{"replicas": 0, "on_error": "stop"}')});
ok(OpenSearchNode::caught_up($node, 'shop', 'gadgets'), 'on_error stop');
$node->safe_psql('shop', q{UPDATE gadgets SET addr = 'bad' WHERE id = 6});
ok($node->poll_query_until('shop', q{SELECT phase = 'error' FROM flusso_status() WHERE index = 'gadgets'}),
	'shipping stops');
($out, $err, $took) = wait_for(q{SELECT flusso_wait('gadgets', '60s')});
is($out, 'f', 'shipping stopped: false');
ok($took < 10, sprintf('at once (%.1f s of 60)', $took));
like($err, qr/DETAIL:  Shipping to OpenSearch is stopped/, 'a NOTICE says why');
is($node->safe_psql('shop', q{SELECT flusso_wait('things', '30s')}), 't', 'things is waited for meanwhile');
$node->safe_psql('shop', q{UPDATE gadgets SET addr = '10.0.0.6' WHERE id = 6});
$node->safe_psql('shop', q{SELECT flusso_retry_rejected('gadgets')});
ok(poll_until(sub { $node->safe_psql('shop', q{SELECT flusso_wait('gadgets', '1s')}) eq 't' }),
	'fixed and retried: true');

$node->stop;
done_testing();

# The shipper keeps what it read of the catalog, and the build statements
# it compiled, from pass to pass while every generation is served
# (shipper/ship_catalog.c); each change it depends on is still picked up:
#   - a server's url changed (ALTER SERVER): shipping fails there, and
#     goes on once it is set back;
#   - a root TRUNCATE (the worker marks the generation): it is emptied;
#   - a new version of the definition (a new generation, a new build
#     statement): the alias moves, and a change shipped afterwards has the
#     new field;
#   - a column the definition reads dropped, then added back: what ships
#     is built from the table as it is then.
# With a shipper that never reads its catalog again once steady, the url
# change goes unseen (the check times out).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available();

my $node = flusso_node('shipper_cache');
$node->safe_psql('postgres', q{
	CREATE EXTENSION flusso;
	CREATE TABLE items (id int PRIMARY KEY, n int NOT NULL, label text);
	INSERT INTO items SELECT i, 0, 'l' || i FROM generate_series(1, 20) i;
});
my $v1 = q{
version: 1
table: items
primary_key: id
fields:
  - integer: n
    required: true
};
$node->safe_psql('postgres', "SELECT flusso_create_index('items', \$d\$$v1\$d\$)");
$node->safe_psql('postgres', 'SELECT count(*) FROM flusso_provision()');
ok($node->poll_query_until('postgres', q{SELECT phase = 'live' FROM flusso_status()}),
	'the index is live');
my $os = OpenSearchNode->start('shipper_cache');
my $url = $os->url;
$node->safe_psql('postgres', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$url', index_prefix 't-', request_timeout '5')});
$node->safe_psql('postgres',
	q{SELECT flusso_set_sinks('items', ARRAY['table', 'search'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'postgres', 'items'), 'the index is served in OpenSearch');

# A document as a realtime GET of the alias sees it, or undef.
sub doc_of
{
	my ($id) = @_;
	my ($status, $doc) = $os->request('GET', "/t-items/_doc/$id?realtime=true");
	return $status == 200 && $doc->{found} ? $doc->{_source} : undef;
}

sub shipped
{
	my ($id, $n) = @_;
	my $start = time;
	while (time - $start < 60)
	{
		my $doc = doc_of($id);
		return 1 if $doc && $doc->{n} == $n;
		select(undef, undef, undef, 0.05);
	}
	return 0;
}

# Steady: passes go by with what the shipper keeps.
for my $n (1 .. 3)
{
	$node->safe_psql('postgres', "UPDATE items SET n = $n WHERE id = 1");
	ok(shipped(1, $n), "steady: change $n is shipped");
}

# 1. The server's url changes to a port nobody listens on.
$node->safe_psql('postgres', q{ALTER SERVER search OPTIONS (SET url 'http://127.0.0.1:9')});
$node->safe_psql('postgres', 'UPDATE items SET n = 4 WHERE id = 1');
ok($node->poll_query_until('postgres',
		q{SELECT ship_error LIKE 'could not reach OpenSearch server "search"%' AND ship_pending > 0
		  FROM flusso_status()}),
	'the new url is used: shipping fails there');
is(doc_of(1)->{n}, 3, 'the change is not shipped to the old url');
$node->safe_psql('postgres', "ALTER SERVER search OPTIONS (SET url '$url')");
ok(shipped(1, 4), 'the url set back: the change is shipped');

# 2. A root TRUNCATE empties the served generation.
$node->safe_psql('postgres',
	q{BEGIN; TRUNCATE items; INSERT INTO items VALUES (7, 70, 'seven'); COMMIT;});
ok(OpenSearchNode::caught_up($node, 'postgres', 'items'), 'after a TRUNCATE, caught up');
is($os->count('t-items'), 1, 'the generation was emptied: one document left');
is(doc_of(7)->{n}, 70, 'the row inserted after the TRUNCATE is shipped');

# 3. A new version that changes a field: a new generation, built with the
# new statement.
my $old = $node->safe_psql('postgres',
	q{SELECT concrete FROM flusso.opensearch_generation WHERE index_name = 'items'});
# (n no longer required: a field added alone is taken in place, TAP 050)
my $v2 = ($v1 =~ s/required: true/required: false/r) . "  - keyword: label\n    required: false\n";
$node->safe_psql('postgres', "SELECT flusso_create_index('items', \$d\$$v2\$d\$, replace => true)");
ok($node->poll_query_until('postgres',
		qq{SELECT count(*) = 1 FROM flusso.opensearch_generation
		   WHERE index_name = 'items' AND state = 'served' AND concrete <> '$old'}),
	'the new generation is served');
ok(OpenSearchNode::caught_up($node, 'postgres', 'items'), 'the old generation is retired');
$node->safe_psql('postgres', 'UPDATE items SET n = 71 WHERE id = 7');
ok(shipped(7, 71), 'a change after the new version is shipped');
is(doc_of(7)->{label}, 'seven', 'built with the new statement: it has the new field');

# 4. The column the new field reads is dropped (the worker stops the
# index), then added back: the index is seeded again, and what ships is
# built from the table as it is now.
$node->safe_psql('postgres', 'ALTER TABLE items DROP COLUMN label');
$node->safe_psql('postgres', 'UPDATE items SET n = 72 WHERE id = 7');
$node->safe_psql('postgres', q{ALTER TABLE items ADD COLUMN label text DEFAULT 'back'});
ok(shipped(7, 72), 'the column back: the change is shipped');
is(doc_of(7)->{label}, 'back', 'with the column as it is now');

done_testing();

# One source per OpenSearch index: a copy of a database never writes into,
# or takes the alias of, the indexes the original serves.  A copy made
# from a template while flusso runs is taken in at once (no restart): its
# status says what it is a copy of, and its index stops in conflict over
# the alias instead of fighting the original for it, before and after a
# restart, while a client samples the alias every 100 ms and never sees
# the copy's index or a change made only in the copy.  Given an
# index_prefix of its own, the copy serves under its own names.  A dump
# restored into another database of the cluster is taken in the same
# way; flusso_adopt() lets it take the alias over, as after a migration,
# and the original then stops in conflict in its turn.

use strict;
use warnings;

use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;
use OpenSearchNode;

OpenSearchNode::skip_unless_available('curl');

my $os = OpenSearchNode->start('copies');
my $url = $os->url;
my $node = flusso_node('copies');
ok(streaming_library($node), 'the library streams');
$node->safe_psql('library', qq{CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$url', index_prefix 'tp-')});
$node->safe_psql('library', q{SELECT flusso_set_sinks('books', ARRAY['table', 'search'], '{"replicas": 0}')});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'books: seeded into OpenSearch');
my $books_ids = 'SELECT id::text FROM books';
is_deeply($os->differences($node, 'library', 'books', 'tp-books', $books_ids), [],
	'the alias serves every document of the library');

my $library_source = $node->safe_psql('library', 'SELECT id FROM flusso.source');
like($library_source, qr/^[0-9a-f-]{36}$/, 'the library has an identity');
my $served = $os->alias_targets('tp-books')->[0];
my (undef, $mapping) = $os->request('GET', "/$served/_mapping");
is_deeply($mapping->{$served}{mappings}{_meta}{flusso},
	{
		source => $library_source,
		database => 'library',
		database_oid => $node->safe_psql('library', q{SELECT oid FROM pg_database WHERE datname = 'library'}),
		system_identifier => $node->safe_psql('library', q{SELECT system_identifier FROM pg_control_system()})
	},
	'the OpenSearch index records the library as its owner');

# Sample what readers of the alias see, every 100 ms, until told to stop:
# which indexes it serves, and the document a copy will change.
my $id = $node->safe_psql('library', 'SELECT min(id) FROM books WHERE NOT withdrawn');
my $samples = "$PostgreSQL::Test::Utils::tmp_check/alias_samples";
my $stop = "$samples.stop";
my $sampler = IPC::Run::start(
	[
		'bash', '-c',
		qq{while [ ! -e '$stop' ]; do
			echo "alias \$(curl -s -m 2 '$url/_alias/tp-books')"
			echo "doc \$(curl -s -m 2 '$url/tp-books/_doc/$id')"
			sleep 0.1
		done}
	],
	'>', $samples);

# A copy made from the template while the worker and the shipper run.
$node->safe_psql('postgres', 'CREATE DATABASE staging TEMPLATE library');
my $conflict = q{SELECT phase = 'error' AND last_error LIKE 'OpenSearch alias "tp-books" serves "tp-books-g%", an index of database "library" (OID %), not of this database "staging" (OID %give server "search" an index_prefix of its own%flusso_adopt(''books'')%'
	FROM flusso_status() WHERE index = 'books'};
ok($node->poll_query_until('staging', $conflict),
	'the copy is taken in at once: its index stops in conflict over the alias, naming both databases and the remedies');
is($node->safe_psql('staging', q{SELECT severity || ': ' || message FROM flusso_check() WHERE path = 'source'}),
	'info: this database is a copy of database "library" (OID '
	  . $node->safe_psql('library', q{SELECT oid FROM pg_database WHERE datname = 'library'})
	  . ', system identifier '
	  . $node->safe_psql('library', q{SELECT system_identifier FROM pg_control_system()})
	  . '): its OpenSearch indexes are its own, and it takes no alias that database serves',
	'flusso_check() says what the database is a copy of');
is($node->safe_psql('staging', q{SELECT count(*) FROM flusso_check() WHERE path = 'sinks.opensearch'
	AND severity = 'error' AND message LIKE 'OpenSearch alias "tp-books" serves%'}),
	'1', 'flusso_check() reports the conflict');
isnt($node->safe_psql('staging', 'SELECT id FROM flusso.source'), $library_source,
	'the copy has an identity of its own');
is($node->safe_psql('staging', q{SELECT copied_from->>'id' FROM flusso.source}),
	$library_source, 'and remembers the one it was copied from');
$node->safe_psql('staging', qq{UPDATE books SET title = 'staging edit' WHERE id = $id});
$node->safe_psql('library', qq{UPDATE books SET pages = 321 WHERE id = $id});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'the library goes on shipping');

# A restart: both seed nothing new into the other's names, and nobody
# moves the alias (the served generation is checked every 5 s).
$node->restart;
ok(library_caught_up($node), 'the library streams after the restart');
ok($node->poll_query_until('staging', $conflict), 'the copy is still in conflict after the restart');
$node->safe_psql('library', qq{UPDATE books SET pages = 322 WHERE id = $id});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'the library ships after the restart');
# the sampler watches on while each shipper checks its alias twice (every 5 s)
sleep 11;
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('books')}), '0',
	'the library verifies clean, through its alias too');
ok($node->poll_query_until('staging', $conflict), 'the copy stays in conflict');

# Given a prefix of its own, the copy serves its own documents there.
$node->safe_psql('staging', q{ALTER SERVER search OPTIONS (SET index_prefix 'staging-')});
ok(OpenSearchNode::caught_up($node, 'staging', 'books'),
	'with an index_prefix of its own, the copy is live and shipped');
is($node->safe_psql('staging', q{SELECT count(*) FROM flusso_verify('books')}), '0',
	'the copy verifies clean, through its own alias');
my (undef, $staged) = $os->request('GET', "/staging-books/_doc/$id");
is($staged->{_source}{title}, 'staging edit', 'its alias serves the change made in the copy');

# A dump of the library restored into another database of the cluster.
my $dump = "$PostgreSQL::Test::Utils::tmp_check/library.sql";
$node->command_ok([ 'pg_dump', '-d', $node->connstr('library'), '-f', $dump ], 'pg_dump of the library');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'psql', '-X', '-q', '-d', $node->connstr('restored'), '-f', $dump ],
	'the dump is restored into another database');
(my $restored_conflict = $conflict) =~ s/"staging"/"restored"/;
ok($node->poll_query_until('restored', $restored_conflict),
	'the restored database knows it is a copy, and its index stops in conflict over the alias');
$node->safe_psql('restored', qq{UPDATE books SET title = 'restored edit' WHERE id = $id});

# Everything readers of the alias saw so far was the library's.
IPC::Run::run([ 'touch', $stop ]);
$sampler->finish;
my (%served, $docs, $foreign_docs);
for my $line (split /\n/, slurp_file($samples))
{
	if ($line =~ /^alias (\{.*\})$/)
	{
		$served{$_} = 1 for keys %{ decode_json($1) };
	}
	elsif ($line =~ /^doc (\{.*\})$/)
	{
		$docs++;
		$foreign_docs++ if $1 =~ /staging edit|restored edit/;
	}
}
cmp_ok($docs, '>', 100, "readers were sampled every 100 ms ($docs samples)");
is($foreign_docs // 0, 0, 'no reader ever saw a change made in a copy');
my @not_library;
for my $index (sort keys %served)
{
	my (undef, $m) = $os->request('GET', "/$index/_mapping");
	push @not_library, $index if ($m->{$index}{mappings}{_meta}{flusso}{source} // '') ne $library_source;
}
is_deeply(\@not_library, [], 'the alias only ever served indexes of the library: ' . join(', ', sort keys %served));

# flusso_adopt(): the restored database takes the alias over, as after a
# migration, and the library stops in conflict; then the library takes it
# back.
my $restored_source = $node->safe_psql('restored', 'SELECT id FROM flusso.source');
$node->safe_psql('restored', q{SELECT flusso_adopt('books')});
ok(OpenSearchNode::caught_up($node, 'restored', 'books'), 'the restored database serves the alias');
my $taken = $os->alias_targets('tp-books')->[0];
(undef, $mapping) = $os->request('GET', "/$taken/_mapping");
is($mapping->{$taken}{mappings}{_meta}{flusso}{source}, $restored_source,
	'the alias serves an index of the restored database');
(undef, $staged) = $os->request('GET', "/tp-books/_doc/$id");
is($staged->{_source}{title}, 'restored edit', 'with its documents');
(my $library_conflict = $conflict) =~ s/database "library" \(OID %\), not of this database "staging"/database "restored" (OID %), not of this database "library"/;
ok($node->poll_query_until('library', $library_conflict),
	'the library finds the alias taken, and stops in conflict rather than take it back');
$node->safe_psql('library', q{SELECT flusso_adopt('books')});
ok(OpenSearchNode::caught_up($node, 'library', 'books'), 'flusso_adopt() in the library takes it back');
ok($node->poll_query_until('restored', $restored_conflict), 'and the restored database stops in conflict');
is($node->safe_psql('library', q{SELECT count(*) FROM flusso_verify('books')}), '0',
	'the library verifies clean, through its alias too');

$node->stop;
done_testing();

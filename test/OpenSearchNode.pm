# OpenSearchNode.pm: a real OpenSearch node for flusso's TAP tests (the
# embedded node of test/opensearch/), alone or as one of a cluster's, its
# REST API through curl, and what the tests compare between it and
# PostgreSQL.  FLUSSO_OPENSEARCH_LINE chooses the OpenSearch line the nodes
# are of (2, the default, or 3: see node.sh).  Every node a test starts is
# stopped when the test ends.

package OpenSearchNode;

use strict;
use warnings;

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my @started;
my $script = "$ENV{FLUSSO_TEST_DIR}/opensearch/node.sh";
my $line = $ENV{FLUSSO_OPENSEARCH_LINE} // 2;

# Skip the whole test, saying why, when the node cannot run here: it is
# not built (building it downloads from Maven Central, which a packager's
# offline build cannot), no JDK recent enough for its line is found, or a
# tool the test names is missing.  `make test` builds the node and sets
# FLUSSO_REQUIRE_OPENSEARCH, and then any of this fails the test instead.
sub skip_unless_available
{
	my (@tools) = @_;
	my @missing;
	push @missing, "the embedded OpenSearch $line.x node (bash test/opensearch/node.sh build)"
	  unless -f "$ENV{FLUSSO_TEST_DIR}/opensearch/target/line$line/.built";
	push @missing, "a JDK for OpenSearch $line.x (bash test/opensearch/node.sh java says which)"
	  if system("bash '$script' java >/dev/null 2>&1") != 0;
	for my $tool (@tools)
	{
		push @missing, $tool
		  unless $tool =~ m{/} ? -x $tool : grep { -x "$_/$tool" } split /:/, ($ENV{PATH} // '');
	}
	return unless @missing;
	BAIL_OUT('needed and missing: ' . join(', ', @missing))
	  if $ENV{FLUSSO_REQUIRE_OPENSEARCH};
	plan skip_all => 'missing: ' . join(', ', @missing);
}

# Start a node named $name on a free port; dies if it does not come up.
sub start
{
	my ($class, $name) = @_;
	my $self = bless {
		name => $name,
		dir => "$PostgreSQL::Test::Utils::tmp_check/opensearch_$name",
		port => PostgreSQL::Test::Cluster::get_free_port(),
	}, $class;
	$self->restart;
	push @started, $self;
	return $self;
}

# Start a cluster of $count nodes named $name, on free HTTP and transport
# ports; returns its nodes once all have joined and it is yellow or green
# (dies if it does not form).  Each node is one as start returns: kill9 one
# and restart it, and it joins the cluster again with its data.
sub start_cluster
{
	my ($class, $name, $count) = @_;
	my $dir = "$PostgreSQL::Test::Utils::tmp_check/opensearch_$name";
	my (@nodes, @ports);
	for my $i (1 .. $count)
	{
		push @nodes, bless {
			name => "$name node-$i",
			dir => "$dir/node-$i",
			port => PostgreSQL::Test::Cluster::get_free_port(),
		}, $class;
		push @ports, "$nodes[-1]{port}:" . PostgreSQL::Test::Cluster::get_free_port();
	}
	# stopped at the end even if the cluster does not form
	push @started, @nodes;
	system('bash', $script, 'cluster', $dir, @ports) == 0
	  or die "OpenSearch cluster $name did not form";
	return @nodes;
}

sub port { return $_[0]->{port} }
sub url { return "http://127.0.0.1:$_[0]->{port}" }

# The version number of the node (GET /): 2.19.6, 3.9.0...
sub version
{
	my ($self) = @_;
	my ($status, $body) = $self->request('GET', '/');
	die "OpenSearch node $self->{name}: GET / answered $status" if $status != 200;
	return $body->{version}{number};
}

# Start it again (after kill or stop), with its data (a cluster's node
# joins its cluster again).
sub restart
{
	my ($self) = @_;
	system('bash', $script, 'start', $self->{dir}, $self->{port}) == 0
	  or die "OpenSearch node $self->{name} did not start";
	return;
}

# SIGKILL: an outage, as sudden as they come.
sub kill9
{
	my ($self) = @_;
	system('bash', $script, 'kill', $self->{dir});
	return;
}

sub stop
{
	my ($self) = @_;
	system('bash', $script, 'stop', $self->{dir});
	return;
}

END
{
	$_->stop for @started;
}

# What the node says of its cluster, as text for a failing test's diag: its
# nodes, the cluster manager's pending tasks, the health and the busiest
# threads (each request given 10 s).
sub describe
{
	my ($self) = @_;
	my $text = '';
	for my $path ('_cat/nodes?v', '_cat/pending_tasks?v', '_cluster/health?pretty',
		'_nodes/hot_threads?threads=3')
	{
		my $out = `curl -s -m 10 '${\ $self->url}/$path'`;
		$text .= "GET /$path on node $self->{name}:\n" . ($out // '') . "\n";
	}
	return $text;
}

# A request; returns (HTTP status, decoded JSON body or undef).
sub request
{
	my ($self, $method, $path, $body) = @_;
	my @cmd = ('curl', '-s', '-o', '-', '-w', '\n%{http_code}', '-X', $method,
		'-H', 'Content-Type: application/json', $self->url . $path);
	push @cmd, '--data-binary', $body if defined $body;
	open(my $fh, '-|', @cmd) or die "curl: $!";
	local $/;
	my $out = <$fh>;
	close $fh;
	my ($json, $status) = $out =~ /\A(.*)\n(\d+)\z/s;
	return (0, undef) if !defined $status;
	my $decoded = eval { decode_json($json) };
	return ($status, $decoded);
}

# The documents count of $index (an alias or an index), refreshed first.
sub count
{
	my ($self, $index) = @_;
	$self->request('POST', "/$index/_refresh");
	my ($status, $body) = $self->request('GET', "/$index/_count");
	return $status == 200 ? $body->{count} : undef;
}

# Every document of $index: { id => _source }, read with search_after.
sub documents
{
	my ($self, $index) = @_;
	$self->request('POST', "/$index/_refresh");
	my %docs;
	my $after;
	while (1)
	{
		my $query = { size => 500, sort => [ { _id => 'asc' } ], query => { match_all => {} } };
		$query->{search_after} = [$after] if defined $after;
		my ($status, $body) = $self->request('POST', "/$index/_search", encode_json($query));
		die "search on $index answered $status" if $status != 200;
		my $hits = $body->{hits}{hits};
		last if !@$hits;
		$docs{ $_->{_id} } = $_->{_source} for @$hits;
		$after = $hits->[-1]{_id};
	}
	return \%docs;
}

# The indexes an alias points to.
sub alias_targets
{
	my ($self, $alias) = @_;
	my ($status, $body) = $self->request('GET', "/_alias/$alias");
	return $status == 200 ? [ sort keys %$body ] : [];
}

# Every OpenSearch index whose name starts with $prefix.
sub indexes_like
{
	my ($self, $prefix) = @_;
	my ($status, $body) = $self->request('GET', "/_cat/indices/$prefix*?format=json");
	return [] if $status != 200;
	return [ sort map { $_->{index} } @$body ];
}

# Poll until the OpenSearch sink of $index in database $db has nothing
# pending, a generation served and no generation being seeded or emptied
# (after a TRUNCATE of its root table), and the worker has confirmed the
# current WAL position.
sub caught_up
{
	my ($node, $db, $index) = @_;
	my $lsn = $node->safe_psql($db, 'SELECT pg_current_wal_insert_lsn()');
	return $node->poll_query_until(
		$db, qq{SELECT (SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots
		  WHERE slot_name LIKE 'flusso_%' AND database = current_database())
		  AND (SELECT phase = 'live' AND ship_pending = 0 FROM flusso_status() WHERE index = '$index')
		  AND (SELECT bool_and(state = 'served') FROM flusso.opensearch_generation
		       WHERE index_name = '$index' AND state <> 'retired')
		  AND NOT EXISTS (SELECT FROM flusso.opensearch_generation WHERE index_name = '$index'
		       AND (state = 'retired' OR truncate_version IS NOT NULL))});
}

# What flusso queued for OpenSearch so far (the outbox's sequence: 0
# before its first value, which a seed by ranges leaves unused), the
# documents it wrote (flusso_status().documents_written) and those the
# shipper shipped, for $index in database $db.
sub ship_counters
{
	my ($node, $db, $index) = @_;
	my ($queued, $written, $shipped) = split /\|/, $node->safe_psql(
		$db, qq{SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM flusso.outbox_seq),
		documents_written, shipped FROM flusso_status() WHERE index = '$index'});
	return { queued => $queued, written => $written, shipped => $shipped };
}

# How ship_counters grew over $sql, once $settled returns true (checked).
sub ship_growth
{
	my ($node, $db, $index, $sql, $settled) = @_;
	my $before = ship_counters($node, $db, $index);
	$node->safe_psql($db, $sql);
	ok($settled->(), "caught up after: $sql");
	my $after = ship_counters($node, $db, $index);
	return { map { $_ => $after->{$_} - $before->{$_} } keys %$after };
}

# The _version of document $id in $index, or "HTTP <status>".
sub version_of
{
	my ($self, $index, $id) = @_;
	my ($status, $doc) = $self->request('GET', "/$index/_doc/$id");
	return $status == 200 ? $doc->{_version} : "HTTP $status";
}

# Compare every document PostgreSQL builds for $index (flusso_build over
# the ids of its root table's keys, given as SQL) with what $alias holds;
# returns the ids that differ, are missing or are extra.
sub differences
{
	my ($self, $node, $db, $index, $alias, $ids_sql) = @_;
	my $docs = $self->documents($alias);
	my $json = JSON::PP->new->canonical;
	my @wrong;
	my %built;
	for my $line (split /\n/,
		$node->safe_psql($db, "SELECT i, flusso_build('$index', i) FROM ($ids_sql) k(i)"))
	{
		my ($id, $doc) = split /\|/, $line, 2;
		$built{$id} = $doc eq '' ? undef : decode_json($doc);
	}
	for my $id (sort keys %built)
	{
		my $want = $built{$id};
		my $have = $docs->{$id};
		next if !defined $want && !defined $have;
		push @wrong, "$id: " . (!defined $have ? 'missing' : !defined $want ? 'extra' : 'different')
		  if !defined $want || !defined $have || $json->encode($want) ne $json->encode($have);
	}
	push @wrong, map { "$_: extra" } grep { !exists $built{$_} } sort keys %$docs;
	return \@wrong;
}

# test/opensearch/fault_proxy.py in front of a node: its mode is written to
# a control file, and it counts the requests it answered in each mode.
package FaultProxy;

use IPC::Run;
use JSON::PP;

# Start a proxy in front of $os on a free port; returns once it listens.
sub start
{
	my ($class, $os) = @_;
	my $self = bless {
		control => "$PostgreSQL::Test::Utils::tmp_check/proxy_control",
		log => "$PostgreSQL::Test::Utils::tmp_check/proxy.log",
		port => PostgreSQL::Test::Cluster::get_free_port(),
		out => '',
		err => '',
	}, $class;
	$self->fault('pass');
	$self->{run} = IPC::Run::start(
		[ 'python3', "$ENV{FLUSSO_TEST_DIR}/opensearch/fault_proxy.py", '--listen', $self->{port},
		  '--upstream', $os->url, '--control', $self->{control}, '--log', $self->{log} ],
		'>', \$self->{out}, '2>', \$self->{err});
	$self->{run}->pump until $self->{out} =~ /listening/;
	return $self;
}

sub port { return $_[0]->{port} }
sub url { return "http://127.0.0.1:$_[0]->{port}" }
sub log_file { return $_[0]->{log} }

# Enter $mode ("pass", "refuse", "slow 0.5", ...), afresh if already in it.
sub fault
{
	my ($self, $mode) = @_;
	open(my $fh, '>', $self->{control}) or die "$self->{control}: $!";
	print $fh "$mode\n";
	close $fh;
	return;
}

# How many requests the proxy answered in $mode so far.
sub answered
{
	my ($self, $mode) = @_;
	my $stats = `curl -s http://127.0.0.1:$self->{port}/__proxy/stats`;
	my $counts = eval { decode_json($stats)->{by_mode} } || {};
	return $counts->{$mode} // 0;
}

# The proxy's stats: requests, by_mode, bulks_max_in_flight, id_overlaps.
sub stats
{
	my ($self) = @_;
	my $stats = `curl -s http://127.0.0.1:$self->{port}/__proxy/stats`;
	return eval { decode_json($stats) } || {};
}

sub stop
{
	my ($self) = @_;
	$self->{run}->signal('TERM');
	$self->{run}->finish;
	return;
}

1;

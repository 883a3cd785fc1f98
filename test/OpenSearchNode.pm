# OpenSearchNode.pm: a real OpenSearch or Elasticsearch node for flusso's
# TAP tests (the embedded node of test/opensearch/), alone or as one of a
# cluster's, its REST API through curl, and what the tests compare between
# it and PostgreSQL.  FLUSSO_OPENSEARCH_LINE chooses the line the nodes are
# of: 2 (the default: OpenSearch 2.19), 3 (OpenSearch 3.x), es8
# (Elasticsearch 8.19) or es9 (Elasticsearch 9.x); see node.sh.  Every node
# a test starts is stopped when the test ends.
#
# What differs between the engines is decided here, from the line
# (engine, is_elasticsearch, manager_timeout): the parameter a request gives
# the cluster manager's timeout in (cluster_manager_timeout on OpenSearch,
# master_timeout on Elasticsearch, which answers 400 to a parameter it does
# not know), the _cat endpoint naming it, and how documents are read back
# (the scroll API, sorted on _doc: Elasticsearch refuses to sort on _id).
#
# On the Elasticsearch lines a single node may run with security
# (start NAME, security => 1; node.sh's FLUSSO_ES_SECURITY): plain HTTP,
# a basic license, one superuser (admin_user, admin_password), and 401 for
# a request without credentials.  Every request of this module then
# authenticates as that superuser unless told otherwise (request's
# options), and create_api_key makes API keys a test can give flusso.

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
my $elasticsearch = $line =~ /^es/;
# what node.sh names the line ("OpenSearch 2.x", "Elasticsearch 8.x")
my $label = $elasticsearch ? 'Elasticsearch ' . substr($line, 2) . '.x' : "OpenSearch $line.x";
# the superuser of a secure node (node.sh's defaults, or what it is told)
my $admin_user = $ENV{FLUSSO_ES_USER} // 'flusso_test_admin';
my $admin_password = $ENV{FLUSSO_ES_PASSWORD} // 'flusso-test-password';

# The line FLUSSO_OPENSEARCH_LINE names (2, 3, es8, es9), its engine
# ("OpenSearch" or "Elasticsearch"), whether that is Elasticsearch, and what
# node.sh calls it ("OpenSearch 3.x", "Elasticsearch 9.x").
sub line { return $line }
sub engine { return $elasticsearch ? 'Elasticsearch' : 'OpenSearch' }
sub is_elasticsearch { return $elasticsearch ? 1 : 0 }
sub label { return $label }

# The name of the parameter giving a request's timeout for the cluster
# manager (OpenSearch) or master node (Elasticsearch): health, settings,
# index creation...  Elasticsearch refuses cluster_manager_timeout (400).
sub manager_timeout { return $elasticsearch ? 'master_timeout' : 'cluster_manager_timeout' }

# The credentials of a secure node's superuser (node.sh's FLUSSO_ES_USER
# and FLUSSO_ES_PASSWORD, flusso_test_admin and flusso-test-password if
# not set).
sub admin_user { return $admin_user }
sub admin_password { return $admin_password }

# Skip the whole test, saying why, when the node cannot run here: it is
# not built (building it downloads from Maven Central, which a packager's
# offline build cannot), no JDK recent enough for its line is found, or a
# tool the test names is missing.  `make test` builds the node and sets
# FLUSSO_REQUIRE_OPENSEARCH, and then any of this fails the test instead.
sub skip_unless_available
{
	my (@tools) = @_;
	my @missing;
	push @missing, "the embedded $label node (FLUSSO_OPENSEARCH_LINE=$line bash test/opensearch/node.sh build)"
	  unless -f "$ENV{FLUSSO_TEST_DIR}/opensearch/target/line$line/.built";
	push @missing, "a JDK for $label (FLUSSO_OPENSEARCH_LINE=$line bash test/opensearch/node.sh java says which)"
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
# With security => 1 (Elasticsearch lines only; skipped on the others), the
# node runs with security on: see admin_user, create_api_key and request's
# options.
sub start
{
	my ($class, $name, %opts) = @_;
	if ($opts{security} && !$elasticsearch)
	{
		plan skip_all => "a secure node is an Elasticsearch line's (es8, es9), not ${label}'s";
	}
	my $self = bless {
		name => $name,
		dir => "$PostgreSQL::Test::Utils::tmp_check/opensearch_$name",
		port => PostgreSQL::Test::Cluster::get_free_port(),
		security => $opts{security} ? 1 : 0,
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
	  or die "$label cluster $name did not form";
	return @nodes;
}

sub port { return $_[0]->{port} }
sub url { return "http://127.0.0.1:$_[0]->{port}" }
# whether the node runs with security (start's security option)
sub secure { return $_[0]->{security} }

# The version number of the node (GET /): 2.19.6, 3.9.0, 8.19.21...
sub version
{
	my ($self) = @_;
	return $self->info->{version}{number};
}

# The distribution GET / names: "opensearch" (version.distribution), or
# "elasticsearch" for Elasticsearch, whose answer has no distribution.
sub distribution
{
	my ($self) = @_;
	return $self->info->{version}{distribution} // 'elasticsearch';
}

# What GET / answers (name, cluster_name, cluster_uuid, version...); dies
# if it is not 200.
sub info
{
	my ($self) = @_;
	my ($status, $body) = $self->request('GET', '/');
	die "$label node $self->{name}: GET / answered $status" if $status != 200 || !$body;
	return $body;
}

# Start it again (after kill or stop), with its data (a cluster's node
# joins its cluster again; a secure node comes back secure).
sub restart
{
	my ($self) = @_;
	local $ENV{FLUSSO_ES_SECURITY} = $self->{security};
	local $ENV{FLUSSO_ES_USER} = $admin_user;
	local $ENV{FLUSSO_ES_PASSWORD} = $admin_password;
	system('bash', $script, 'start', $self->{dir}, $self->{port}) == 0
	  or die "$label node $self->{name} did not start";
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

# The cluster's health (GET /_cluster/health with the parameters of %params,
# the cluster manager's timeout named as the line wants: manager_timeout
# => '5s' becomes cluster_manager_timeout or master_timeout); returns
# (HTTP status, decoded body).
sub health
{
	my ($self, %params) = @_;
	$params{ manager_timeout() } = delete $params{manager_timeout} if exists $params{manager_timeout};
	my $query = join '&', map { "$_=$params{$_}" } sort keys %params;
	return $self->request('GET', '/_cluster/health' . ($query ne '' ? "?$query" : ''));
}

# What the node says of its cluster, as text for a failing test's diag: its
# nodes, the elected cluster manager (master), its pending tasks, the
# health and the busiest threads (each request given 10 s).
sub describe
{
	my ($self) = @_;
	my $text = '';
	for my $path ('_cat/nodes?v', $elasticsearch ? '_cat/master?v' : '_cat/cluster_manager?v',
		'_cat/pending_tasks?v', '_cluster/health?pretty', '_nodes/hot_threads?threads=3')
	{
		my $out = join '', map { $_ // '' } $self->raw_request('GET', "/$path", undef, { timeout => 10 });
		$text .= "GET /$path on node $self->{name}:\n$out\n";
	}
	return $text;
}

# A request; returns (HTTP status, decoded JSON body or undef).  A secure
# node is asked as its superuser, unless %$opts says otherwise:
#   user => [USER, PASSWORD]  basic authentication as that user
#   api_key => ENCODED        Authorization: ApiKey ENCODED
#   anonymous => 1            no credentials (a secure node answers 401)
#   headers => [...]          more headers, "Name: value"
#   timeout => SECONDS        curl's --max-time
sub request
{
	my ($self, $method, $path, $body, $opts) = @_;
	my ($json, $status) = $self->raw_request($method, $path, $body, $opts);
	return (0, undef) if !defined $status;
	my $decoded = eval { decode_json($json) };
	return ($status, $decoded);
}

# As request, but returns (body as text, HTTP status or undef if curl got
# no answer).
sub raw_request
{
	my ($self, $method, $path, $body, $opts) = @_;
	$opts //= {};
	my @cmd = ('curl', '-s', '-o', '-', '-w', '\n%{http_code}', '-X', $method,
		'-H', 'Content-Type: application/json');
	push @cmd, '-m', $opts->{timeout} if $opts->{timeout};
	push @cmd, '-H', $_ for @{ $opts->{headers} // [] };
	if ($opts->{user})
	{
		push @cmd, '-u', join(':', @{ $opts->{user} });
	}
	elsif ($opts->{api_key})
	{
		push @cmd, '-H', "Authorization: ApiKey $opts->{api_key}";
	}
	elsif ($self->{security} && !$opts->{anonymous})
	{
		push @cmd, '-u', "$admin_user:$admin_password";
	}
	push @cmd, $self->url . $path;
	push @cmd, '--data-binary', $body if defined $body;
	open(my $fh, '-|', @cmd) or die "curl: $!";
	local $/;
	my $out = <$fh>;
	close $fh;
	my ($text, $status) = ($out // '') =~ /\A(.*)\n(\d+)\z/s;
	return ($text, $status && $status != 0 ? $status : undef);
}

# On a secure node, a new API key (POST /_security/api_key as the
# superuser) named $name, with the roles of %$body if given (a body of
# that API: role_descriptors, expiration, metadata; by default the key
# has its creator's rights); returns { encoded, id, api_key, name }: give
# flusso api_key 'ENCODED', or api_key 'API_KEY' with api_key_id 'ID'.
# Dies if the node refuses.
sub create_api_key
{
	my ($self, $name, $body) = @_;
	die "$label node $self->{name} has no security: start it with security => 1"
	  if !$self->{security};
	my ($status, $key) = $self->request('POST', '/_security/api_key',
		encode_json({ %{ $body // {} }, name => $name }));
	die "$label node $self->{name}: POST /_security/api_key answered $status"
	  if $status != 200 || !$key || !$key->{encoded};
	return { map { $_ => $key->{$_} } qw(encoded id api_key name) };
}

# On a secure node, invalidate the API key of id $id (DELETE
# /_security/api_key); true if the node says it did.
sub invalidate_api_key
{
	my ($self, $id) = @_;
	my ($status, $body) = $self->request('DELETE', '/_security/api_key', encode_json({ ids => [$id] }));
	return $status == 200 && $body && grep { $_ eq $id } @{ $body->{invalidated_api_keys} // [] };
}

# The documents count of $index (an alias or an index), refreshed first.
sub count
{
	my ($self, $index) = @_;
	$self->request('POST', "/$index/_refresh");
	my ($status, $body) = $self->request('GET', "/$index/_count");
	return $status == 200 ? $body->{count} : undef;
}

# Every document of $index: { id => _source }, read with the scroll API
# in index order (_doc): neither engine sorts on _id by default
# (Elasticsearch refuses, fielddata on _id being off), and a scroll reads
# one point in time, as search_after would not.
sub documents
{
	my ($self, $index) = @_;
	$self->request('POST', "/$index/_refresh");
	my %docs;
	my ($status, $body) = $self->request('POST', "/$index/_search?scroll=1m",
		encode_json({ size => 500, sort => ['_doc'], query => { match_all => {} } }));
	die "search on $index answered $status" if $status != 200;
	my $scroll = $body->{_scroll_id};
	while (1)
	{
		my $hits = $body->{hits}{hits};
		last if !@$hits;
		$docs{ $_->{_id} } = $_->{_source} for @$hits;
		$scroll = $body->{_scroll_id} // $scroll;
		($status, $body) = $self->request('POST', '/_search/scroll',
			encode_json({ scroll => '1m', scroll_id => $scroll }));
		die "scroll on $index answered $status" if $status != 200;
	}
	$self->request('DELETE', '/_search/scroll', encode_json({ scroll_id => $scroll }));
	return \%docs;
}

# The indexes an alias points to.
sub alias_targets
{
	my ($self, $alias) = @_;
	my ($status, $body) = $self->request('GET', "/_alias/$alias");
	return $status == 200 ? [ sort keys %$body ] : [];
}

# Every index of the node whose name starts with $prefix.
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

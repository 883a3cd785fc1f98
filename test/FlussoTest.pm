# FlussoTest.pm: what every flusso TAP test shares: a node configured as the
# README says, and the library fixture loaded into a database.

package FlussoTest;

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Exporter 'import';

our @EXPORT = qw(flusso_node fixture_path load_library streaming_library);

sub fixture_path
{
	my ($name) = @_;
	return "$ENV{FLUSSO_TEST_DIR}/fixtures/$name";
}

# A started node running with test/flusso.conf.
sub flusso_node
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf',
		slurp_file("$ENV{FLUSSO_TEST_DIR}/flusso.conf"));
	$node->start;
	return $node;
}

# Create database $db with the library tables, rows and flusso.
sub load_library
{
	my ($node, $db) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, slurp_file(fixture_path('schema.sql')));
	$node->safe_psql($db, slurp_file(fixture_path('seed.sql')));
	$node->safe_psql($db, 'CREATE EXTENSION flusso');
}

# Database library with the books and authors indexes defined from the
# fixtures and provisioned; true once its worker streams.
sub streaming_library
{
	my ($node) = @_;
	load_library($node, 'library');
	for my $index ('books', 'authors')
	{
		my $definition = slurp_file(fixture_path("$index.schema.yml"));
		$node->safe_psql('library',
			"SELECT flusso_create_index('$index', \$def\$$definition\$def\$)");
	}
	$node->safe_psql('library', 'SELECT count(*) FROM flusso_provision()');
	return $node->poll_query_until(
		'library', q{SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE backend_type = 'flusso worker' AND query = 'streaming'});
}

1;

# The manual stays true to what is installed: every SQL function and view
# the extension creates and every flusso.* setting the library defines is
# named in docs/, and every relative link of README.md and docs/ (a file,
# or a heading of one) resolves.

use strict;
use warnings;

use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

# the manual sits beside test/: in the tree, or in test/check.sh's
# scratch copy, which takes README.md, LICENSE, docs/ and src/README.md
my $root = dirname($ENV{FLUSSO_TEST_DIR});
my @pages = ("$root/README.md", sort glob("$root/docs/*.md"));
ok(-d "$root/docs" && @pages > 1, "the manual is in $root/docs");

# Markdown text without its fenced blocks, which are examples and output,
# not the manual's prose or links (inline code stays: names are there)
sub prose
{
	my ($file) = @_;
	my $text = slurp_file($file);
	$text =~ s/^(```|~~~).*?^\1[^\n]*$//msg;
	return $text;
}

my %manual;
$manual{$_} = slurp_file($_) for @pages;
my $docs = join("\n", map { $manual{$_} } grep { m{/docs/} } @pages);

my $node = flusso_node('main');
$node->safe_psql('postgres', 'CREATE EXTENSION flusso');

# objects of the extension, from pg_depend: functions and views
my $members = $node->safe_psql(
	'postgres', q{
	WITH member AS (
		SELECT d.classid, d.objid
		  FROM pg_catalog.pg_depend d
		 WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
		   AND d.refobjid OPERATOR(pg_catalog.=)
		       (SELECT oid FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'flusso')
		   AND d.deptype OPERATOR(pg_catalog.=) 'e')
	SELECT 'function', p.proname
	  FROM member m JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) m.objid
	 WHERE m.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
	UNION
	SELECT 'view', c.relname
	  FROM member m JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) m.objid
	 WHERE m.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
	   AND c.relkind OPERATOR(pg_catalog.=) 'v'
	ORDER BY 1, 2});
my @functions = map { (split /\|/)[1] } grep { /^function\|/ } split /\n/, $members;
my @views = map { (split /\|/)[1] } grep { /^view\|/ } split /\n/, $members;
cmp_ok(scalar(@functions), '>=', 20, 'the extension installs its functions ('
	  . scalar(@functions) . ')');

# a function is named as `name(...)`; a view and a setting in backticks
my @missing;
for my $f (@functions)
{
	push @missing, "function $f" unless $docs =~ /`[^`\n]*\b\Q$f\E\(/;
}
for my $v (@views)
{
	push @missing, "view $v" unless $docs =~ /`(?:flusso\.)?\Q$v\E\b[^`\n]*`/;
}
my @settings = split /\n/, $node->safe_psql('postgres',
	"SELECT name FROM pg_catalog.pg_settings WHERE name LIKE 'flusso.%' ORDER BY name");
cmp_ok(scalar(@settings), '>=', 10, 'the library defines its settings ('
	  . scalar(@settings) . ')');
for my $s (@settings)
{
	push @missing, "setting $s" unless $docs =~ /`\Q$s\E\b[^`\n]*`/;
}
is(join("\n", @missing), '', 'every function, view and setting is named in docs/');

# GitHub's anchor for a heading: lower case, markup and punctuation but
# '-' and '_' dropped, each space a '-'; a repeated one gets -1, -2...
sub anchors
{
	my ($file) = @_;
	my (%anchors, %seen);
	for my $line (split /\n/, prose($file))
	{
		next unless $line =~ /^#{1,6}\s+(.*?)\s*#*\s*$/;
		my $slug = lc $1;
		$slug =~ s/\[([^\]]*)\]\([^)]*\)/$1/g;
		$slug =~ s/[^\p{L}\p{N} _-]//g;
		$slug =~ s/ /-/g;
		my $n = $seen{$slug}++;
		$anchors{ $n ? "$slug-$n" : $slug } = 1;
	}
	return \%anchors;
}

my @broken;
my $links = 0;
for my $page (@pages)
{
	my $text = prose($page);
	$text =~ s/`[^`\n]*`//g;
	(my $name = $page) =~ s{^\Q$root\E/}{};
	while ($text =~ /\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)
	{
		my $target = $1;
		next if $target =~ m{^[a-z][a-z0-9+.-]*:}i;    # http:, mailto:...
		$links++;
		my ($path, $anchor) = split /#/, $target, 2;
		my $file = $path eq '' ? $page : dirname($page) . "/$path";
		if (!-e $file)
		{
			push @broken, "$name: $target (no such file)";
		}
		elsif (defined $anchor && $anchor ne ''
			&& !($file =~ /\.md$/ && anchors($file)->{$anchor}))
		{
			push @broken, "$name: $target (no such heading)";
		}
	}
}
cmp_ok($links, '>=', 10, "the manual links its pages ($links relative links)");
is(join("\n", @broken), '', 'every relative link resolves');

done_testing();

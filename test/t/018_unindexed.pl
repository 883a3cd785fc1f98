# Foreign keys without an index: a parent table whose children, grandchildren
# and junction rows can only be found by a scan is seeded, and the build
# statement reads each of those tables in one scan per level, not one per
# parent (judged from the plan auto_explain logs for flusso_verify, which
# builds every document at once with the statement the seed and the live
# path run); the documents equal ones written by hand as correlated
# subqueries, for the parents with children, with none, with no category.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlussoTest;

my $node = flusso_node('unindexed');
$node->safe_psql('postgres', 'CREATE DATABASE shop');
# 3,000 parents (the last 100 without children, every tenth without a
# category), 12,000 children, 24,000 items, 6,000 tag links; no index on
# children.parent_id, items.child_id or parent_tags.parent_id
$node->safe_psql(
	'shop', q{
	CREATE EXTENSION flusso;
	CREATE TABLE categories (id int PRIMARY KEY, label text NOT NULL);
	CREATE TABLE parents (id int PRIMARY KEY, name text NOT NULL, category_id int);
	CREATE TABLE children (id int PRIMARY KEY, parent_id int NOT NULL, amount numeric(8,2) NOT NULL,
						   created_at timestamptz NOT NULL, hidden boolean NOT NULL);
	CREATE TABLE items (id int PRIMARY KEY, child_id int NOT NULL, sku text NOT NULL);
	CREATE TABLE tags (id int PRIMARY KEY, name text NOT NULL);
	CREATE TABLE parent_tags (tag_id int NOT NULL, parent_id int NOT NULL, PRIMARY KEY (tag_id, parent_id));
	INSERT INTO categories SELECT i, 'category ' || i FROM generate_series(1, 5) i;
	INSERT INTO parents SELECT i, 'parent ' || i, CASE WHEN i % 10 <> 0 THEN 1 + i % 5 END
	FROM generate_series(1, 3000) i;
	INSERT INTO children SELECT i, 1 + (i * 7919) % 2900, (i % 1000) / 10.0,
		'2025-01-01'::timestamptz + (i % 500) * interval '1 hour', i % 7 = 0
	FROM generate_series(1, 12000) i;
	INSERT INTO items SELECT i, 1 + (i * 31) % 12000, 'sku-' || (i % 97) FROM generate_series(1, 24000) i;
	INSERT INTO tags SELECT i, 'tag ' || (i % 7) FROM generate_series(1, 20) i;
	INSERT INTO parent_tags SELECT DISTINCT 1 + (i * 13) % 20, 1 + (i * 17) % 3000 FROM generate_series(1, 6000) i;
	ANALYZE});

$node->safe_psql(
	'shop', q{SELECT flusso_create_index('parents', $$
version: 1
table: parents
primary_key: id
fields:
  - text: name
    required: true
  - belongs_to: category
    table: categories
    column: category_id
    primary_key: id
    fields:
      - keyword: label
        required: true
  - has_many: children
    table: children
    foreign_key: parent_id
    primary_key: id
    filters:
      - { column: hidden, op: eq, value: false }
    order_by:
      - { column: created_at, direction: desc }
    limit: 3
    fields:
      - decimal: amount
        required: true
      - has_many: items
        table: items
        foreign_key: child_id
        primary_key: id
        order_by:
          - { column: sku, direction: asc }
        fields:
          - keyword: sku
            required: true
      - count: itemCount
        table: items
        foreign_key: child_id
  - many_to_many: tags
    table: tags
    primary_key: id
    through: { table: parent_tags, left_key: parent_id, right_key: tag_id }
    order_by:
      - { column: name, direction: asc }
    fields:
      - keyword: name
        required: true
  - count: childCount
    table: children
    foreign_key: parent_id
  - sum: childAmount
    table: children
    foreign_key: parent_id
    column: amount
    value_type: decimal
  - ids: tagIds
    table: tags
    through: { table: parent_tags, left_key: parent_id, right_key: tag_id }
    element_type: integer
$$)});
$node->safe_psql('shop', 'SELECT count(*) FROM flusso_provision()');
ok( $node->poll_query_until(
		'shop', q{SELECT phase = 'live' FROM flusso_status() WHERE index = 'parents'}),
	'seeded and live');
is($node->safe_psql('shop', 'SELECT count(*) FROM flusso_docs.parents'), '3000', 'every parent has a document');

# the documents, written by hand the way a correlated subquery reads them
my $mismatches = $node->safe_psql(
	'shop', q{
	WITH expected AS (
		SELECT p.id::text AS id, jsonb_build_object(
			'name', p.name,
			'category', (SELECT jsonb_build_object('label', c.label) FROM categories c WHERE c.id = p.category_id),
			'children', (SELECT COALESCE(jsonb_agg(s.doc ORDER BY s.created_at DESC, s.id), '[]') FROM (
				SELECT ch.id, ch.created_at, jsonb_build_object('amount', ch.amount,
					'items', (SELECT COALESCE(jsonb_agg(jsonb_build_object('sku', i.sku) ORDER BY i.sku, i.id), '[]')
							  FROM items i WHERE i.child_id = ch.id),
					'itemCount', (SELECT count(*) FROM items i WHERE i.child_id = ch.id)) AS doc
				FROM children ch WHERE ch.parent_id = p.id AND NOT ch.hidden
				ORDER BY ch.created_at DESC, ch.id LIMIT 3) s),
			'tags', (SELECT COALESCE(jsonb_agg(jsonb_build_object('name', t.name) ORDER BY t.name, t.id), '[]')
					 FROM parent_tags pt JOIN tags t ON t.id = pt.tag_id WHERE pt.parent_id = p.id),
			'childCount', (SELECT count(*) FROM children ch WHERE ch.parent_id = p.id),
			'childAmount', (SELECT sum(ch.amount) FROM children ch WHERE ch.parent_id = p.id),
			'tagIds', (SELECT COALESCE(jsonb_agg(t.id ORDER BY t.id), '[]')
					   FROM parent_tags pt JOIN tags t ON t.id = pt.tag_id WHERE pt.parent_id = p.id)) AS doc
		FROM parents p WHERE p.id % 50 IN (0, 1, 2) OR p.id > 2990)
	SELECT count(*) FROM expected e LEFT JOIN flusso_docs.parents d USING (id)
	WHERE d.doc IS DISTINCT FROM e.doc});
is($mismatches, '0', 'documents equal the correlated form, with and without children, category and tags');
is($node->safe_psql('shop', q{SELECT doc->'children' = '[]' AND doc->'childCount' = '0'
	AND doc->'childAmount' = 'null' FROM flusso_docs.parents WHERE id = '3000'}),
	't', 'a parent without children: an empty array, 0 and null');

# the plan of the statement over every key: no subplan, and every table
# whose foreign key has no index scanned once per level
my $offset = -s $node->logfile;
$node->safe_psql(
	'shop', q{
	LOAD 'auto_explain';
	SET auto_explain.log_min_duration = 0;
	SET auto_explain.log_nested_statements = on;
	SET auto_explain.log_analyze = on;
	SET auto_explain.log_timing = off;
	SELECT count(*) FROM flusso_verify('parents')});
my $log = substr(slurp_file($node->logfile), $offset);
my ($plan) = $log =~ /Query Text: WITH built AS .*?\n(.*?)\n\S/s;
ok(defined $plan, 'auto_explain logged the plan of the build statement');
$plan //= '';
unlike($plan, qr/SubPlan/, 'no subquery runs per row');
my @scans = $plan =~ /(Scan (?:using \S+ )?on (?:children|items|parent_tags) \S+.*?loops=\d+)/g;
note join("\n", @scans);
# children: the join (filtered) and two aggregates (not); items: the
# join, whose rows the count reads too (unfiltered both); parent_tags: the
# join and the ids
is(scalar(@scans), 6, 'each level and aggregate reads its table once, a count its join\'s rows');
is(scalar(grep { !/loops=1$/ } @scans), 0, 'and no scan repeats per row');
is($node->safe_psql('shop', q{SELECT count(*) FROM flusso_verify('parents')}), '0',
	'every document equals a fresh build');

done_testing();

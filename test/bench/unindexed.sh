#!/usr/bin/env bash
#
# unindexed.sh: seeding a parent table whose children's foreign key has no
# index, against the same seed with one.
#
# 30k parents and 120k children (times BENCH_SCALE, default 1); the index
# holds each parent's last 5 children by date, their count and the sum of
# their amounts.  The seed is timed from flusso_create_index until the index
# is live, first without an index on children.parent_id, then (the index
# dropped and defined again) with one.  A build that read the children once
# per parent would cost parents x children without the index; set-based it
# stays linear.  Goal: without <= 2 x with.  The reference, in the same run:
# one CREATE TABLE AS SELECT building the same documents set-based (without
# the index), whose documents both seeds must equal.
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"
source "$(dirname "$0")/users.sh"	# now, wait_until

parents=$(scaled 30000)
children=$(scaled 120000)

bench_start
echo "unindexed.sh: $parents parents, $children children"
bench_psql <<SQL
CREATE EXTENSION flusso;
CREATE TABLE parents (id bigint PRIMARY KEY, name text NOT NULL);
CREATE TABLE children (id bigint PRIMARY KEY, parent_id bigint NOT NULL,
					   amount numeric(10,2) NOT NULL, created_at timestamptz NOT NULL);
INSERT INTO parents SELECT i, 'Parent ' || i FROM generate_series(1, $parents) i;
INSERT INTO children SELECT i, 1 + (i * 7919) % $parents, (i % 1000) / 10.0,
	'2024-01-01'::timestamptz + i * interval '1 minute'
FROM generate_series(1, $children) i;
VACUUM ANALYZE parents, children;
SQL

# seed NAME: seconds from defining index NAME until it is live
seed() {
	local start
	start=$(now)
	bench_psql -o /dev/null <<SQL
SELECT flusso_create_index('$1', \$\$
version: 1
table: parents
primary_key: id
fields:
  - text: name
    required: true
  - has_many: children
    table: children
    foreign_key: parent_id
    primary_key: id
    order_by: [ { column: created_at, direction: desc } ]
    limit: 5
    fields:
      - decimal: amount
        required: true
      - timestamp: created_at
        required: true
  - count: childCount
    table: children
    foreign_key: parent_id
  - sum: childAmount
    table: children
    foreign_key: parent_id
    column: amount
    value_type: decimal
\$\$);
SELECT count(*) FROM flusso_provision();
SQL
	wait_until "SELECT phase = 'live' FROM flusso_status() WHERE index = '$1'"
	awk -v s="$start" -v e="$(now)" 'BEGIN { printf "%.3f", e - s }'
}

# same NAME: how many documents of index NAME equal the reference's
same() {
	bench_psql -At -c "SELECT count(*) FROM reference r JOIN flusso_docs.\"$1\" d USING (id) WHERE r.doc = d.doc"
}

reference=$(bench_psql -At <<'SQL'
\set QUIET on
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
CREATE TABLE reference AS
SELECT p.id::text AS id, jsonb_build_object('name', p.name,
	'children', COALESCE(l.docs, '[]'), 'childCount', COALESCE(a.n, 0), 'childAmount', a.total) AS doc
FROM parents p
LEFT JOIN (SELECT parent_id, jsonb_agg(jsonb_build_object('amount', amount, 'created_at', created_at) ORDER BY rank) AS docs
		   FROM (SELECT c.*, row_number() OVER (PARTITION BY parent_id ORDER BY created_at DESC, id) AS rank
				 FROM children c) c
		   WHERE rank <= 5 GROUP BY parent_id) l ON l.parent_id = p.id
LEFT JOIN (SELECT parent_id, count(*) AS n, sum(amount) AS total FROM children GROUP BY parent_id) a
	ON a.parent_id = p.id;
ALTER TABLE reference ADD PRIMARY KEY (id);
SELECT extract(epoch FROM clock_timestamp()) - :t0;
SQL
)

without=$(seed without_index)
same_without=$(same without_index)
bench_psql -o /dev/null -c "SELECT flusso_drop_index('without_index')" \
	-c "CREATE INDEX ON children (parent_id)" -c "ANALYZE children"
with=$(seed with_index)
same_with=$(same with_index)

awk -v w="$with" -v wo="$without" -v r="$reference" -v n="$parents" \
	-v sw="$same_with" -v swo="$same_without" 'BEGIN {
	printf "seed without an index on the foreign key %.2f s (documents equal to the reference: %d of %d)\n", wo, swo, n
	printf "seed with it %.2f s (documents equal to the reference: %d of %d)\n", w, sw, n
	printf "ratio (without / with): %.2f (goal <= 2)\n", wo / w
	printf "reference CREATE TABLE AS SELECT, set-based, without the index: %.2f s\n", r
}'

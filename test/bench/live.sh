#!/usr/bin/env bash
#
# live.sh: catch-up of the live path.  A users index (trimmed lower-cased
# email, name, the last 5 orders by date with total and status, the order
# count) is defined on empty tables; then 200k users and 1M orders (times
# BENCH_SCALE, default 1) are loaded, and the time until the worker has
# confirmed past the load is measured.  The reference, in the same run: one
# CREATE TABLE AS SELECT building the same documents from the loaded rows,
# with its primary key.  Goal: catch-up <= 1.5 x the reference.
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"

users=$(scaled 200000)
orders=$(scaled 1000000)

bench_start
echo "live.sh: $users users, $orders orders"

bench_psql <<SQL
CREATE EXTENSION flusso;
CREATE TABLE users (id bigint PRIMARY KEY, email text NOT NULL, name text NOT NULL);
CREATE TABLE orders (id bigint PRIMARY KEY, user_id bigint NOT NULL, total numeric(10,2) NOT NULL,
					 status text NOT NULL, created_at timestamptz NOT NULL);
CREATE INDEX ON orders (user_id);
SELECT flusso_create_index('users', \$\$
version: 1
table: users
primary_key: id
fields:
  - keyword: email
    required: true
    transforms: [trim, lowercase]
  - text: name
    required: true
  - has_many: orders
    table: orders
    foreign_key: user_id
    primary_key: id
    order_by: [ { column: created_at, direction: desc } ]
    limit: 5
    fields:
      - decimal: total
        required: true
      - keyword: status
        required: true
  - count: orderCount
    table: orders
    foreign_key: user_id
\$\$);
SELECT count(*) FROM flusso_provision();
SQL

for _ in $(seq 1 100); do
	[ "$(bench_psql -At -c "SELECT count(*) FROM pg_stat_activity WHERE query = 'streaming'")" = 1 ] && break
	sleep 0.2
done

start=$(bench_psql -At -c "SELECT extract(epoch FROM clock_timestamp())")
bench_psql <<SQL
INSERT INTO users SELECT i, '  User' || i || '@Example.COM ', 'User ' || i FROM generate_series(1, $users) i;
CREATE PROCEDURE load_orders(n bigint, users bigint) LANGUAGE plpgsql AS \$\$
BEGIN
	FOR lo IN 1..n BY 50000 LOOP
		INSERT INTO orders SELECT i, 1 + (i * 7919) % users, (i % 1000) / 10.0,
			(ARRAY['new', 'paid', 'shipped'])[1 + i % 3], '2024-01-01'::timestamptz + i * interval '1 minute'
		FROM generate_series(lo, least(lo + 49999, n)) i;
		COMMIT;
	END LOOP;
END \$\$;
CALL load_orders($orders, $users);
SQL
loaded=$(bench_psql -At -c "SELECT extract(epoch FROM clock_timestamp())")
lsn=$(bench_psql -At -c "SELECT pg_current_wal_lsn()")
until [ "$(bench_psql -At -c "SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name LIKE 'flusso_%'")" = t ]; do
	sleep 0.1
done
caught=$(bench_psql -At -c "SELECT extract(epoch FROM clock_timestamp())")

reference=$(bench_psql -At <<'SQL'
\set QUIET on
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
CREATE TABLE reference AS
SELECT u.id::text AS id, jsonb_build_object(
	'email', lower(btrim(u.email)), 'name', u.name,
	'orders', (SELECT COALESCE(jsonb_agg(s.doc ORDER BY s.ord), '[]') FROM (
		SELECT jsonb_build_object('total', o.total, 'status', o.status) AS doc,
		       row_number() OVER (ORDER BY o.created_at DESC, o.id) AS ord
		FROM orders o WHERE o.user_id = u.id ORDER BY o.created_at DESC, o.id LIMIT 5) s),
	'orderCount', (SELECT count(*) FROM orders o WHERE o.user_id = u.id)) AS doc
FROM users u;
ALTER TABLE reference ADD PRIMARY KEY (id);
SELECT extract(epoch FROM clock_timestamp()) - :t0;
SQL
)
same=$(bench_psql -At -c "SELECT count(*) FROM reference r JOIN flusso_docs.users d USING (id) WHERE r.doc = d.doc")
stats=$(bench_psql -At -c "SELECT changes_captured || ' changes, ' || documents_written || ' documents written, ' || batches || ' batches' FROM flusso_status()")

awk -v s="$start" -v l="$loaded" -v c="$caught" -v r="$reference" -v same="$same" -v n="$users" -v st="$stats" 'BEGIN {
	printf "load %.1f s; caught up %.1f s after the load ended, %.1f s after it began (%s)\n", l - s, c - l, c - s, st
	printf "reference CREATE TABLE AS SELECT: %.1f s; documents equal to it: %d of %d\n", r, same, n
	printf "ratio (catch-up after load / reference): %.2f; (load start to caught up) / (load + reference): %.2f (goal <= 1.5)\n", (c - l) / r, (c - s) / ((l - s) + r)
}'

# users.sh: sourced by the benchmarks that build the users index: its
# tables, its definition, the loads, and the reference it is measured
# against (one CREATE TABLE AS SELECT building the same documents, with its
# primary key).  Needs cluster.sh.

# users_tables: the extension and the tables, empty, with the index orders
# needs anyway; users_plain_tables: the tables alone
users_tables() {
	bench_psql -c "CREATE EXTENSION flusso"
	users_plain_tables
}

users_plain_tables() {
	bench_psql <<'SQL'
CREATE TABLE users (id bigint PRIMARY KEY, email text NOT NULL, name text NOT NULL);
CREATE TABLE orders (id bigint PRIMARY KEY, user_id bigint NOT NULL, total numeric(10,2) NOT NULL,
					 status text NOT NULL, created_at timestamptz NOT NULL);
CREATE INDEX ON orders (user_id);
SQL
}

# users_definition: the index's definition (trimmed lower-cased email,
# name, the last 5 orders by date with total and status, the order count)
users_definition() {
	cat <<'YAML'
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
YAML
}

# users_index: the index, provisioned
users_index() {
	bench_psql -o /dev/null -v definition="$(users_definition)" <<'SQL'
SELECT flusso_create_index('users', :'definition');
SELECT count(*) FROM flusso_provision();
SQL
}

# users_search_index URL PREFIX OPTIONS: a server "search" on URL with
# that index_prefix, and the index shipping to it alone with those
# OpenSearch options, created and given its sink in one transaction (the
# worker never starts a seed of the table sink), then provisioned
users_search_index() {
	bench_psql -c "CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
		OPTIONS (url '$1', index_prefix '$2')" >/dev/null
	bench_psql -o /dev/null -v definition="$(users_definition)" -v options="$3" <<'SQL'
BEGIN;
SELECT flusso_create_index('users', :'definition');
SELECT flusso_set_sinks('users', ARRAY['search'], :'options');
COMMIT;
SELECT count(*) FROM flusso_provision();
SQL
}

# users_load USERS ORDERS: the rows, orders committed 50,000 at a time
users_load() {
	bench_psql <<SQL
INSERT INTO users SELECT i, '  User' || i || '@Example.COM ', 'User ' || i FROM generate_series(1, $1) i;
CREATE PROCEDURE load_orders(n bigint, users bigint) LANGUAGE plpgsql AS \$\$
BEGIN
	FOR lo IN 1..n BY 50000 LOOP
		INSERT INTO orders SELECT i, 1 + (i * 7919) % users, (i % 1000) / 10.0,
			(ARRAY['new', 'paid', 'shipped'])[1 + i % 3], '2024-01-01'::timestamptz + i * interval '1 minute'
		FROM generate_series(lo, least(lo + 49999, n)) i;
		COMMIT;
	END LOOP;
END \$\$;
CALL load_orders($2, $1);
SQL
}

# users_update_script: write the update mix pgbench runs (an order updated,
# another moved to another user; pgbench sets :orders and :users) into the
# cluster's directory, and print its path
users_update_script() {
	local script="$BENCH_DIR/move_orders.sql"
	as_cluster_user tee "$script" >/dev/null <<'SQL'
\set o1 random(1, :orders)
\set o2 random(1, :orders)
\set u random(1, :users)
BEGIN;
UPDATE orders SET total = total + 1, status = CASE status WHEN 'new' THEN 'paid' WHEN 'paid' THEN 'shipped' ELSE 'new' END WHERE id = :o1;
UPDATE orders SET user_id = :u WHERE id = :o2;
END;
SQL
	echo "$script"
}

# users_reference: seconds one CREATE TABLE AS SELECT takes to build the
# same documents into table reference, with its primary key
users_reference() {
	bench_psql -At <<'SQL'
\set QUIET on
SET client_min_messages = warning;
DROP TABLE IF EXISTS reference;
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
}

# users_same: how many stored documents equal the reference's
users_same() {
	bench_psql -At -c "SELECT count(*) FROM reference r JOIN flusso_docs.users d USING (id) WHERE r.doc = d.doc"
}

# wait_until SQL: poll every 0.1 s until SQL returns t
wait_until() {
	until [ "$(bench_psql -At -c "$1")" = t ]; do
		sleep 0.1
	done
}

now() {
	bench_psql -At -c "SELECT extract(epoch FROM clock_timestamp())"
}

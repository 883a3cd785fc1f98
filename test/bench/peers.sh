#!/usr/bin/env bash
#
# peers.sh: flusso against two other systems that keep OpenSearch in sync
# with PostgreSQL, in one run, on one cluster and one OpenSearch node (the
# embedded one, test/opensearch/node.sh, on BENCH_OPENSEARCH_PORT, default
# 9298):
#   - rust: the Rust flusso 0.15.1 (crates.io, flusso-cli), built by
#     cargo install --locked;
#   - pgsync: PGSync 7.3.0 (PyPI) in a virtualenv, with redis-server
#     (Debian: apt-get install redis-server) on BENCH_OPENSEARCH_PORT + 200.
# Both are installed on first use into BENCH_PEERS_DIR (default
# test/bench/.peers/, ignored by git; the Rust build took 26 minutes on 2
# shared cores) and never committed.  Not part of make test.
#
# The document is users.sh's users index on all three: flusso and the Rust
# flusso read the same definition (users_definition; the two formats are
# the same); PGSync reads the users (email, name) and all their orders (id,
# total, status, created_at) and a plugin (pgsync_plugin below) trims and
# lower-cases the email, keeps the last 5 orders by date (total and status)
# and adds the order count.  flusso ships with the OpenSearch sink alone.
#
# For each system in turn, in databases of its own (SYSTEM_seed, SYSTEM_live):
#  1. seed: 200k users and 1M orders exist; wall time from starting the
#     system (flusso: flusso_create_index) until every document is in
#     OpenSearch, and the CPU time of the syncing processes.
#  2. bulk: the system running on empty tables (but for user 0); 200k users
#     and 1M orders inserted in two transactions; the time from the load's
#     end until a marker committed after it (a new name for user 0) is
#     visible by realtime GET, and the CPU time from the load's start.
#  3. updates: 100k single-row UPDATE transactions (pgbench, 4 clients, as
#     fast as they go); the time from their end until a marker is visible.
#  4. latency: pgbench runs users.sh's update mix at BENCH_RATE (default
#     200) tx/s for BENCH_SECONDS (default 35) while latency_probe.py commits
#     a user's new name about ten times a second and polls by realtime _mget
#     until it is visible (synchronous_commit on, as in latency.sh);
#     p50/p95/p99/max, the CPU time, and pgbench's latency.  The same mix
#     is first run alone (no system, no probe) on the plain database: the
#     syncing CPU is PostgreSQL's beyond that run's plus the external
#     processes' (for flusso, its worker and shipper are printed too).
# After 1, 3 and 4 (once a marker is visible), the documents in OpenSearch are compared with a fresh
# build from the tables (users.sh's reference): ids and every field of the
# index, totals as numbers; the count that differ is printed (and, for
# flusso, flusso_verify's).
#
# CPU time: "syncing" is the CPU of the whole cluster over the window (its
# processes and those that ended, from the postmaster's children's times)
# less what the same load costs with no system (measured first, in database
# plain), plus the external processes (the Rust daemon; PGSync and Redis).
# For flusso that is its worker and shipper plus what it adds to the
# backends; the worker's and the shipper's own CPU is printed beside.
#
# Sizes scale with BENCH_SCALE (default 1); BENCH_SYSTEMS (default "flusso
# rust pgsync") chooses the systems; BENCH_SEED_ONLY=1 measures the seed
# alone (the full run takes over an hour at full size).  Waits give up after BENCH_TIMEOUT
# (default 1800) seconds and say so.
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"
source "$(dirname "$0")/users.sh"

users=$(scaled 200000)
orders=$(scaled 1000000)
updates=$(scaled 100000)
seconds=${BENCH_SECONDS:-35}
rate=${BENCH_RATE:-200}
timeout=${BENCH_TIMEOUT:-1800}
systems=${BENCH_SYSTEMS:-flusso rust pgsync}
os_port=${BENCH_OPENSEARCH_PORT:-9298}
os="http://127.0.0.1:$os_port"
redis_port=$((os_port + 200))
rust_status_port=$((os_port + 100))
node="$FLUSSO_ROOT/test/opensearch/node.sh"
probe="$FLUSSO_ROOT/test/bench/latency_probe.py"
dump="$FLUSSO_ROOT/test/bench/peers_dump.py"
peers=${BENCH_PEERS_DIR:-$FLUSSO_ROOT/test/bench/.peers}
rust_bin=$peers/rust/bin/flusso
pgsync_bin=$peers/pgsync/bin/pgsync
pgsync_python=$peers/pgsync/bin/python3
hz=$(getconf CLK_TCK)

# the peers, installed once
mkdir -p "$peers"
PATH=$PATH:$HOME/.cargo/bin
if [[ " $systems " == *" rust "* ]] && [ ! -x "$rust_bin" ]; then
	echo "peers.sh: building the Rust flusso 0.15.1 into $peers/rust (cargo install)"
	nice cargo install flusso-cli --version 0.15.1 --locked --root "$peers/rust" >"$peers/rust.log" 2>&1 ||
		{ tail -20 "$peers/rust.log"; exit 1; }
fi
if [[ " $systems " == *" pgsync "* ]]; then
	if [ ! -x "$pgsync_bin" ]; then
		echo "peers.sh: installing PGSync 7.3.0 into $peers/pgsync (virtualenv, pip)"
		python3 -m venv "$peers/pgsync"
		"$peers/pgsync/bin/pip" install -q pgsync==7.3.0
	fi
	command -v redis-server >/dev/null || { echo "peers.sh: PGSync needs redis-server (apt-get install redis-server)"; exit 1; }
fi

bench_start "listen_addresses = '127.0.0.1'"
bash "$node" build >/dev/null
bash "$node" start "$BENCH_DIR/opensearch" "$os_port" >/dev/null
external=()
cleanup() {
	local pid
	for pid in "${external[@]}"; do kill "$pid" 2>/dev/null || true; done
	# BENCH_KEEP keeps the cluster and the node
	[ -n "${BENCH_KEEP:-}" ] || { bash "$node" stop "$BENCH_DIR/opensearch" >/dev/null; bench_stop; }
}
trap cleanup EXIT
echo "peers.sh: $users users, $orders orders, $updates updates; pgbench at $rate tx/s for $seconds s; systems: $systems"

# cluster_ticks: CPU clock ticks of the whole cluster so far, its ended
# processes included (the postmaster's children's times)
cluster_ticks() {
	local pm child
	pm=$(head -1 "$BENCH_DIR/data/postmaster.pid")
	{
		awk '{ print $14 + $15 + $16 + $17 }' "/proc/$pm/stat"
		for child in $(pgrep -P "$pm"); do
			awk '{ print $14 + $15 }' "/proc/$child/stat" 2>/dev/null || true
		done
	} | awk '{ s += $1 } END { print s + 0 }'
}

# proc_ticks PID...: CPU clock ticks of the processes, their children's included
proc_ticks() {
	local pid child
	for pid in "$@"; do
		awk '{ print $14 + $15 + $16 + $17 }' "/proc/$pid/stat" 2>/dev/null || true
		for child in $(pgrep -P "$pid"); do
			awk '{ print $14 + $15 }' "/proc/$child/stat" 2>/dev/null || true
		done
	done | awk '{ s += $1 } END { print s + 0 }'
}

secs() { awk -v t="$1" -v hz="$hz" 'BEGIN { printf "%.1f", t / hz }'; }
clock() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# load2 USERS ORDERS: users.sh's rows, in two transactions
load2() {
	bench_psql <<SQL
INSERT INTO users SELECT i, '  User' || i || '@Example.COM ', 'User ' || i FROM generate_series(1, $1) i;
INSERT INTO orders SELECT i, 1 + (i::bigint * 7919) % $1, (i % 1000) / 10.0,
	(ARRAY['new', 'paid', 'shipped'])[1 + i % 3], '2024-01-01'::timestamptz + i * interval '1 minute'
FROM generate_series(1, $2) i;
SQL
}

# wait_for WHAT COMMAND...: run COMMAND every 20 ms until it succeeds or
# BENCH_TIMEOUT passes (then say so and return 1)
wait_for() {
	local what=$1 deadline
	shift
	deadline=$(($(date +%s) + timeout))
	until "$@" >/dev/null 2>&1; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "peers.sh: $what: not within $timeout s" >&2
			return 1
		fi
		sleep 0.02
	done
}

# visible ALIAS ID NAME: the document ID has that name (realtime GET)
visible() {
	curl -sf "$os/$1/_doc/$2?realtime=true&_source_includes=name" | grep -qF "\"name\":\"$3\""
}

marker_seq=0
# marker ALIAS: a new name for user 0, committed; waits until it is visible
marker() {
	marker_seq=$((marker_seq + 1))
	bench_psql -c "UPDATE users SET name = 'marker $marker_seq' WHERE id = 0"
	wait_for "marker $marker_seq in $1" visible "$1" 0 "marker $marker_seq"
}

# differ ALIAS: how many documents in OpenSearch differ from a fresh build
# from the tables (missing, extra or different: ids, email, name, the
# orders' total and status in order, orderCount; totals compared as numbers)
differ() {
	curl -sf -XPOST "$os/$1/_refresh" >/dev/null
	users_reference >/dev/null
	bench_psql -q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS opensearch_docs" \
		-c "CREATE TABLE opensearch_docs (id text PRIMARY KEY, doc jsonb NOT NULL)"
	python3 "$dump" "127.0.0.1:$os_port" "$1" | bench_psql -c "COPY opensearch_docs FROM STDIN (FORMAT csv)"
	bench_psql -At <<'SQL'
CREATE FUNCTION pg_temp.norm(d jsonb) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_build_object('email', d->'email', 'name', d->'name',
		'orders', (SELECT coalesce(jsonb_agg(jsonb_build_object('total', (o->>'total')::numeric,
			'status', o->'status') ORDER BY n), '[]') FROM jsonb_array_elements(CASE jsonb_typeof(d->'orders') WHEN 'array' THEN d->'orders' ELSE '[]' END)
			WITH ORDINALITY x(o, n)),
		'orderCount', (d->>'orderCount')::bigint)
$$;
SELECT count(*) FROM reference r FULL JOIN opensearch_docs o USING (id)
WHERE r.id IS NULL OR o.id IS NULL OR pg_temp.norm(r.doc) IS DISTINCT FROM pg_temp.norm(o.doc);
SQL
}

# children: how many processes the postmaster has; settled N: it has N or
# fewer (the time of a backend that ended counts once the postmaster has
# reaped it)
children() { pgrep -c -P "$(head -1 "$BENCH_DIR/data/postmaster.pid")"; }
settled() { [ "$(children)" -le "$1" ]; }

# pgbench_updates: 100k single-row UPDATE transactions, 4 clients
pgbench_updates() {
	local script="$BENCH_DIR/update_order.sql"
	printf '%s\n' '\set o random(1, :orders)' 'UPDATE orders SET total = total + 1 WHERE id = :o;' |
		as_cluster_user tee "$script" >/dev/null
	as_cluster_user "$PG_BINDIR/pgbench" -n -c 4 -j 2 -t $((updates / 4)) -f "$script" -D orders="$orders" \
		-h "$BENCH_DIR" -p "$BENCH_PORT" -U postgres -d "$BENCH_DB" >"$BENCH_DIR/pgbench_updates.out" 2>&1
}

# latency ALIAS: pgbench's update mix at $rate tx/s beside the probe,
# synchronous commits; prints the probe's lines, then
# "pgbench TPS LATENCY_MS" and "cpu CLUSTER_TICKS"
mix=$(users_update_script)
latency() {
	local out="$BENCH_DIR/pgbench_latency.out" pgbench c0 c1 n0
	local connection=(-h "$BENCH_DIR" -p "$BENCH_PORT" -U postgres -d "$BENCH_DB")
	bench_psql -c "ALTER SYSTEM SET synchronous_commit = on" -c "SELECT pg_reload_conf()" >/dev/null
	n0=$(children)
	c0=$(cluster_ticks)
	as_cluster_user "$PG_BINDIR/pgbench" -n -c 4 -j 2 -R "$rate" -T "$seconds" -f "$mix" \
		-D orders="$orders" -D users="$users" "${connection[@]}" >"$out" 2>&1 &
	pgbench=$!
	as_cluster_user python3 "$probe" --seconds "$seconds" --no-table --opensearch "127.0.0.1:$os_port" \
		--alias "$1" -- "$PG_BINDIR/psql" "${connection[@]}"
	wait "$pgbench"
	timeout=10 wait_for "pgbench's backends to end" settled "$n0" || true
	c1=$(cluster_ticks)
	bench_psql -c "ALTER SYSTEM RESET synchronous_commit" -c "SELECT pg_reload_conf()" >/dev/null
	awk '/^tps = / { tps = $3 } /^latency average = / { lat = $4 } END { print "pgbench", tps, lat }' "$out"
	echo "cpu $((c1 - c0))"
}

# mix_alone: the same pgbench mix with no system and no probe, on the
# plain database; prints "pgbench TPS LATENCY_MS" and "cpu CLUSTER_TICKS"
mix_alone() {
	local out="$BENCH_DIR/pgbench_alone.out" c0 c1 n0
	local connection=(-h "$BENCH_DIR" -p "$BENCH_PORT" -U postgres -d plain)
	BENCH_DB=plain bench_psql -c "ALTER SYSTEM SET synchronous_commit = on" -c "SELECT pg_reload_conf()" >/dev/null
	n0=$(children)
	c0=$(cluster_ticks)
	as_cluster_user "$PG_BINDIR/pgbench" -n -c 4 -j 2 -R "$rate" -T "$seconds" -f "$mix" \
		-D orders="$orders" -D users="$users" "${connection[@]}" >"$out" 2>&1
	timeout=10 wait_for "pgbench's backends to end" settled "$n0" || true
	c1=$(cluster_ticks)
	BENCH_DB=plain bench_psql -c "ALTER SYSTEM RESET synchronous_commit" -c "SELECT pg_reload_conf()" >/dev/null
	awk '/^tps = / { tps = $3 } /^latency average = / { lat = $4 } END { print "pgbench", tps, lat }' "$out"
	echo "cpu $((c1 - c0))"
}

# ---------------------------------------------------------------- systems
# Each defines SYSTEM_start DB ALIAS (start it, on DB, into ALIAS; for the
# seed the wall time counts from here), SYSTEM_seeded (true once the seed
# is in OpenSearch), SYSTEM_pids (its external processes) and SYSTEM_stop.

flusso_start() {
	bench_psql -c "CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
		OPTIONS (url '$os', index_prefix '${2%users}')" >/dev/null
	# one transaction: the worker never starts a seed of the table sink
	bench_psql -o /dev/null -v definition="$(users_definition)" <<'SQL'
BEGIN;
SELECT flusso_create_index('users', :'definition');
SELECT flusso_set_sinks('users', ARRAY['search'], '{"replicas": 0}');
COMMIT;
SELECT count(*) FROM flusso_provision();
SQL
}
# (OpenSearch first: the alias exists once a generation serves; a psql
# every 20 ms would start a backend each time, whose CPU the cluster's
# would count, where the others are polled over HTTP)
flusso_seeded() {
	curl -sf "$os/$alias/_count" >/dev/null || return 1
	[ "$(bench_psql -At -c "SELECT (SELECT phase = 'live' AND ship_pending = 0 FROM flusso_status())
		AND EXISTS (SELECT FROM flusso.opensearch_generation WHERE state = 'served')
		AND NOT EXISTS (SELECT FROM flusso.opensearch_generation WHERE state <> 'served')")" = t ]
}
flusso_cpu() { echo 0; }
flusso_own() {
	local pids
	pids=$(bench_psql -At -c "SELECT pid FROM pg_stat_activity
		WHERE backend_type IN ('flusso worker', 'flusso shipper') AND datname = current_database()")
	# shellcheck disable=SC2086
	proc_ticks $pids
}
flusso_stop() {
	echo "  flusso_verify: $(bench_psql -At -c "SELECT count(*) FROM flusso_verify('users')") documents differ"
	bench_psql -o /dev/null -c "SELECT flusso_drop_index('users')"
}

rust_pid=
rust_start() {
	local dir="$BENCH_DIR/$BENCH_DB"
	mkdir -p "$dir"
	users_definition >"$dir/users.schema.yml"
	cat >"$dir/flusso.toml" <<TOML
prefix = "${2%users}"

[source]
type = "postgres"
connection_url = { host = "127.0.0.1", port = $BENCH_PORT, user = "postgres", database = "$BENCH_DB" }

[sinks.search]
type = "opensearch"
url = "$os"
number_of_replicas = 0

[[index]]
name = "users"
schema = "users.schema.yml"
enabled = true
TOML
	(cd "$dir" && exec "$rust_bin" run --config flusso.toml --lock flusso.lock --slot "$BENCH_DB" \
		--publication "$BENCH_DB" --public-address "127.0.0.1:$rust_status_port" \
		--private-address "127.0.0.1:$((rust_status_port + 1))" >"$dir/flusso.log" 2>&1) &
	rust_pid=$!
	external+=("$rust_pid")
}
rust_seeded() {
	curl -sf "http://127.0.0.1:$rust_status_port/status" | grep -q '"phase":"live"'
}
rust_cpu() { proc_ticks "$rust_pid"; }
rust_stop() {
	kill "$rust_pid"
	wait "$rust_pid" || true
	curl -sf -XDELETE "$os/${1}*" >/dev/null || true
}

pgsync_pid=
redis_pid=
pgsync_plugin() {
	mkdir -p "$1/plugins"
	: >"$1/plugins/__init__.py"
	cat >"$1/plugins/users.py" <<'PY'
from pgsync import plugin


class Users(plugin.Plugin):
    """users.sh's document from the users and all their orders."""
    name = 'Users'

    def transform(self, doc, **kwargs):
        orders = doc.get('orders') or []
        latest = sorted(orders, key=lambda o: o['id'])
        latest.sort(key=lambda o: o['created_at'], reverse=True)
        doc['email'] = doc['email'].strip(' ').lower()
        doc['orders'] = [{'total': o['total'], 'status': o['status']} for o in latest[:5]]
        doc['orderCount'] = len(orders)
        return doc
PY
}
# pgsync_script ALIAS: write the schema and a script running PGSync on
# $BENCH_DB with its environment (arguments: PGSync's).  PGSync loads no
# plugin when its program's path contains "test" (its own test runs), as
# test/bench/.peers/ does: so python -c runs it.
pgsync_script() {
	local dir="$BENCH_DIR/$BENCH_DB"
	cat >"$dir/schema.json" <<JSON
[{"database": "$BENCH_DB", "index": "$1", "plugins": ["Users"],
  "nodes": {"table": "users", "columns": ["email", "name"],
            "children": [{"table": "orders", "label": "orders", "columns": ["id", "total", "status", "created_at"],
                          "relationship": {"variant": "object", "type": "one_to_many",
                                           "foreign_key": {"child": ["user_id"], "parent": ["id"]}}}]}}]
JSON
	cat >"$dir/pgsync.sh" <<SH
cd "$dir"
export PYTHONPATH="$dir" PG_HOST=127.0.0.1 PG_PORT="$BENCH_PORT" PG_USER=postgres \\
	OPENSEARCH=true ELASTICSEARCH_HOST=127.0.0.1 ELASTICSEARCH_PORT="$os_port" \\
	REDIS_HOST=127.0.0.1 REDIS_PORT="$redis_port" CHECKPOINT_PATH="$dir"
exec "$pgsync_python" -c 'from pgsync.sync import main; main()' --config schema.json "\$@" >>"$dir/pgsync.log" 2>&1
SH
}
pgsync_start() {
	local dir="$BENCH_DIR/$BENCH_DB"
	mkdir -p "$dir/redis"
	pgsync_plugin "$dir"
	redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir/redis" \
		>"$dir/redis.log" 2>&1 &
	redis_pid=$!
	external+=("$redis_pid")
	wait_for "redis" redis-cli -p "$redis_port" ping
	pgsync_script "$2"
	if [ "$BENCH_DB" = pgsync_seed ]; then
		# the seed: bootstrap and one full sync, then PGSync exits
		/usr/bin/time -f '%U %S' -o "$dir/time" bash "$dir/pgsync.sh" --bootstrap &
	else
		bash "$dir/pgsync.sh" --bootstrap --daemon &
	fi
	pgsync_pid=$!
	external+=("$pgsync_pid")
}
pgsync_seeded() { ! kill -0 "$pgsync_pid" 2>/dev/null; }
pgsync_cpu() {
	local dir="$BENCH_DIR/$BENCH_DB"
	if kill -0 "$pgsync_pid" 2>/dev/null; then
		proc_ticks "$pgsync_pid" "$redis_pid"
	else
		awk -v r="$(proc_ticks "$redis_pid")" -v hz="$hz" '{ print int(($1 + $2) * hz + r) }' "$dir/time"
	fi
}
pgsync_stop() {
	kill "$pgsync_pid" 2>/dev/null || true
	wait "$pgsync_pid" 2>/dev/null || true
	kill "$redis_pid"
	wait "$redis_pid" || true
	curl -sf -XDELETE "$os/$1" >/dev/null || true
}

# ------------------------------------------------------- the plain load
bench_psql -c "CREATE DATABASE plain" >/dev/null
BENCH_DB=plain users_plain_tables >/dev/null
n0=$(children)
c0=$(cluster_ticks)
t0=$(clock)
BENCH_DB=plain load2 "$users" "$orders" >/dev/null
t1=$(clock)
timeout=10 wait_for "the plain load's backend to end" settled "$n0" || true
c1=$(cluster_ticks)
plain_ticks=$((c1 - c0))
echo "plain load (two transactions, no system): $(elapsed "$t0" "$t1") s, cluster CPU $(secs "$plain_ticks") s"
if [ "${BENCH_SEED_ONLY:-0}" != 1 ]; then
	out=$(mix_alone)
	read -r _ alone_tps alone_lat < <(grep '^pgbench' <<<"$out") || true
	read -r _ alone_ticks < <(grep '^cpu' <<<"$out") || true
	alone_cpu=$(awk -v t="$alone_ticks" -v hz="$hz" -v s="$seconds" 'BEGIN { printf "%.0f", 100 * t / hz / s }')
	echo "the update mix at $rate tx/s with no system: PostgreSQL CPU $alone_cpu % of a core;" \
		"pgbench $alone_tps tps, latency $alone_lat ms"
fi

declare -A r
for system in $systems; do
	echo "== $system"
	own=

	# 1. seed
	export BENCH_DB=${system}_seed
	alias=${system}-seed-users
	BENCH_DB=postgres bench_psql -c "CREATE DATABASE $BENCH_DB" >/dev/null
	if [ "$system" = flusso ]; then users_tables >/dev/null; else users_plain_tables >/dev/null; fi
	users_load "$users" "$orders" >/dev/null
	bench_psql -c "VACUUM ANALYZE users, orders"
	c0=$(cluster_ticks)
	t0=$(clock)
	"${system}_start" "$BENCH_DB" "$alias"
	if wait_for "$system seed" "${system}_seeded"; then
		t1=$(clock)
		c1=$(cluster_ticks)
		e1=$("${system}_cpu")
		[ "$system" = flusso ] && own=$(flusso_own)
		r[$system.seed]=$(elapsed "$t0" "$t1")
		r[$system.seed_cpu]=$(secs $((c1 - c0 + e1)))
		curl -sf -XPOST "$os/$alias/_refresh" >/dev/null
		count=$(curl -sf "$os/$alias/_count" | sed 's/.*"count":\([0-9]*\).*/\1/')
		echo "  seed: ${r[$system.seed]} s, $count documents; CPU: cluster $(secs $((c1 - c0))) s," \
			"external $(secs "$e1") s${own:+ (worker and shipper $(secs "$own") s)}"
	fi
	r[$system.seed_differ]=$(differ "$alias")
	echo "  seed: ${r[$system.seed_differ]} documents differ from a fresh build"
	"${system}_stop" "$alias"
	[ "${BENCH_SEED_ONLY:-0}" = 1 ] && continue

	# 2. bulk: the system running on empty tables but user 0
	export BENCH_DB=${system}_live
	alias=${system}-live-users
	BENCH_DB=postgres bench_psql -c "CREATE DATABASE $BENCH_DB" >/dev/null
	if [ "$system" = flusso ]; then users_tables >/dev/null; else users_plain_tables >/dev/null; fi
	bench_psql -c "INSERT INTO users VALUES (0, 'marker@example.com', 'marker 0')"
	"${system}_start" "$BENCH_DB" "$alias"
	# (PGSync's daemon is ready when the marker is visible)
	[ "$system" = pgsync ] || wait_for "$system start" "${system}_seeded" || true
	marker "$alias"
	own0=0
	[ "$system" = flusso ] && own0=$(flusso_own)
	c0=$(cluster_ticks)
	e0=$("${system}_cpu")
	t0=$(clock)
	load2 "$users" "$orders" >/dev/null
	t1=$(clock)
	if marker "$alias"; then
		t2=$(clock)
		c1=$(cluster_ticks)
		e1=$("${system}_cpu")
		r[$system.bulk]=$(elapsed "$t1" "$t2")
		r[$system.bulk_cpu]=$(secs $((c1 - c0 - plain_ticks + e1 - e0)))
		[ "$system" = flusso ] && own=$(($(flusso_own) - own0))
		echo "  bulk: load $(elapsed "$t0" "$t1") s, caught up ${r[$system.bulk]} s after it;" \
			"syncing CPU ${r[$system.bulk_cpu]} s (cluster $(secs $((c1 - c0))) s less the plain load's," \
			"external $(secs $((e1 - e0))) s${own:+, worker and shipper $(secs "$own") s})"
	fi

	# 3. single-row updates
	t0=$(clock)
	pgbench_updates
	t1=$(clock)
	if marker "$alias"; then
		t2=$(clock)
		r[$system.updates]=$(elapsed "$t1" "$t2")
		echo "  updates: $updates in $(elapsed "$t0" "$t1") s, caught up ${r[$system.updates]} s after them"
	fi
	r[$system.updates_differ]=$(differ "$alias")
	echo "  after the bulk load and the updates: ${r[$system.updates_differ]} documents differ from a fresh build"

	# 4. latency
	c0=$(cluster_ticks)
	e0=$("${system}_cpu")
	[ "$system" = flusso ] && own0=$(flusso_own)
	out=$(latency "$alias")
	e1=$("${system}_cpu")
	own=
	[ "$system" = flusso ] && own=$(($(flusso_own) - own0))
	grep -v '^pgbench\|^cpu' <<<"$out" | sed 's/^/  /'
	read -r _ p50 p95 p99 max _ < <(grep '^OpenSearch' <<<"$out" |
		sed 's/.*p50 \([0-9]*\)  p95 \([0-9]*\)  p99 \([0-9]*\)  max \([0-9]*\).*/x \1 \2 \3 \4/') || true
	read -r _ tps lat < <(grep '^pgbench' <<<"$out") || true
	read -r _ pg < <(grep '^cpu' <<<"$out") || true
	r[$system.latency]="$p50/$p95/$p99/$max"
	r[$system.latency_p50]=$p50
	r[$system.pg_cpu]=$(awk -v t="$pg" -v hz="$hz" -v s="$seconds" 'BEGIN { printf "%.0f", 100 * t / hz / s }')
	r[$system.ext_cpu]=$(awk -v t="$((e1 - e0))" -v hz="$hz" -v s="$seconds" 'BEGIN { printf "%.0f", 100 * t / hz / s }')
	r[$system.pgbench]=$lat
	# what syncing costs: PostgreSQL's CPU beyond the mix alone's, and the
	# external processes'
	r[$system.sync_cpu]=$(awk -v p="${r[$system.pg_cpu]}" -v a="${alone_cpu:-0}" -v e="${r[$system.ext_cpu]}" \
		'BEGIN { printf "%.0f", p - a + e }')
	echo "  latency: PostgreSQL CPU ${r[$system.pg_cpu]} % of a core, external ${r[$system.ext_cpu]} %;" \
		"syncing ${r[$system.sync_cpu]} % (PostgreSQL's beyond the mix alone's, and the external)${own:+,}" \
		"${own:+worker and shipper $(awk -v t="$own" -v hz="$hz" -v s="$seconds" 'BEGIN { printf "%.0f", 100 * t / hz / s }') %;}" \
		"pgbench $tps tps, latency $lat ms (alone: ${alone_lat:-?} ms)"
	t0=$(clock)
	marker "$alias" && echo "  caught up $(elapsed "$t0" "$(clock)") s after the run"
	r[$system.live_differ]=$(differ "$alias")
	echo "  afterwards: ${r[$system.live_differ]} documents differ from a fresh build"
	[ -n "${BENCH_KEEP:-}" ] || "${system}_stop" "$alias"
done

echo "== summary ($users users, $orders orders, $updates updates, $rate tx/s)"
printf '%-8s %10s %10s %10s %10s %12s %18s %8s %8s %9s %9s %s\n' system seed_s seed_cpu bulk_s bulk_cpu updates_s \
	'latency_ms' pg_cpu% ext_cpu% sync_cpu% pgbench_ms 'differ (seed/updates/end)'
for system in $systems; do
	printf '%-8s %10s %10s %10s %10s %12s %18s %8s %8s %9s %9s %s\n' "$system" "${r[$system.seed]:-?}" \
		"${r[$system.seed_cpu]:-?}" "${r[$system.bulk]:-?}" "${r[$system.bulk_cpu]:-?}" "${r[$system.updates]:-?}" \
		"${r[$system.latency]:-?}" "${r[$system.pg_cpu]:-?}" "${r[$system.ext_cpu]:-?}" "${r[$system.sync_cpu]:-?}" \
		"${r[$system.pgbench]:-?}" \
		"${r[$system.seed_differ]:-?}/${r[$system.updates_differ]:-?}/${r[$system.live_differ]:-?}"
done
for peer in rust pgsync; do
	[[ " $systems " == *" flusso "* && " $systems " == *" $peer "* ]] || continue
	ratio() { awk -v a="${r[flusso.$1]:-}" -v b="${r[$peer.$1]:-}" 'BEGIN { if (a == "" || b == "" || b == 0) print "?"; else printf "%.2f", a / b }'; }
	echo "flusso / $peer: seed $(ratio seed) (CPU $(ratio seed_cpu)), bulk $(ratio bulk) (CPU $(ratio bulk_cpu))," \
		"updates $(ratio updates), latency p50 $(ratio latency_p50), syncing CPU at $rate tx/s $(ratio sync_cpu)," \
		"pgbench latency $(ratio pgbench)"
done

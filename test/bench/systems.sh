# systems.sh: sourced by the benchmarks that run flusso beside the systems
# it replaces (peers.sh, throughput.sh, scale.sh): where the peers are
# installed and how, the cluster and the OpenSearch node they share, the
# clocks, waits and checks every benchmark takes the same way, and each
# system's start, readiness, CPU and stop.  Needs cluster.sh and users.sh,
# and $systems (the systems the benchmark runs: flusso, rust, pgsync).
#
#   - rust: the Rust flusso 0.15.1 (crates.io, flusso-cli), built by
#     cargo install --locked;
#   - pgsync: PGSync 7.3.0 (PyPI) in a virtualenv, with redis-server
#     (Debian: apt-get install redis-server) on BENCH_OPENSEARCH_PORT + 200.
# Both are installed on first use into BENCH_PEERS_DIR (default
# test/bench/.peers/, ignored by git; the Rust build took 26 minutes on 2
# shared cores) and never committed.  The node is the embedded one
# (test/opensearch/node.sh) on BENCH_OPENSEARCH_PORT (default 9298), of the
# line FLUSSO_OPENSEARCH_LINE names (default 2: OpenSearch 2.19; es8 or es9
# for Elasticsearch, which PGSync is told it talks to, and which the Rust
# flusso, OpenSearch's alone, is refused on).
# Waits give up after BENCH_TIMEOUT (default 1800) seconds and say so.

timeout=${BENCH_TIMEOUT:-1800}
os_port=${BENCH_OPENSEARCH_PORT:-9298}
os="http://127.0.0.1:$os_port"
redis_port=$((os_port + 200))
rust_status_port=$((os_port + 100))
node="$FLUSSO_ROOT/test/opensearch/node.sh"
dump="$FLUSSO_ROOT/test/bench/peers_dump.py"
peers=${BENCH_PEERS_DIR:-$FLUSSO_ROOT/test/bench/.peers}
rust_bin=$peers/rust/bin/flusso
pgsync_bin=$peers/pgsync/bin/pgsync
pgsync_python=$peers/pgsync/bin/python3
hz=$(getconf CLK_TCK)
bench_name=$(basename "$0")
engine_line=${FLUSSO_OPENSEARCH_LINE:-2}
case $engine_line in
es8 | es9) pgsync_opensearch=false engine_label="Elasticsearch ${engine_line#es}.x" ;;
*) pgsync_opensearch=true engine_label="OpenSearch $engine_line.x" ;;
esac
if [[ $pgsync_opensearch = false && " $systems " == *" rust "* ]]; then
	echo "$bench_name: the Rust flusso ships to OpenSearch alone: leave rust out of BENCH_SYSTEMS on $engine_label" >&2
	exit 1
fi

# peers_install: the peers $systems names, installed once
peers_install() {
	mkdir -p "$peers"
	PATH=$PATH:$HOME/.cargo/bin
	if [[ " $systems " == *" rust "* ]] && [ ! -x "$rust_bin" ]; then
		echo "$bench_name: building the Rust flusso 0.15.1 into $peers/rust (cargo install)"
		nice cargo install flusso-cli --version 0.15.1 --locked --root "$peers/rust" >"$peers/rust.log" 2>&1 ||
			{ tail -20 "$peers/rust.log"; exit 1; }
	fi
	if [[ " $systems " == *" pgsync "* ]]; then
		if [ ! -x "$pgsync_bin" ]; then
			echo "$bench_name: installing PGSync 7.3.0 into $peers/pgsync (virtualenv, pip)"
			python3 -m venv "$peers/pgsync"
			"$peers/pgsync/bin/pip" install -q pgsync==7.3.0
		fi
		command -v redis-server >/dev/null || { echo "$bench_name: PGSync needs redis-server (apt-get install redis-server)"; exit 1; }
	fi
}

# peers_up: the cluster and the node, stopped on exit (but with
# BENCH_KEEP), and the external processes started meanwhile killed
peers_up() {
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
}

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
		[ -n "$pid" ] || continue
		awk '{ print $14 + $15 + $16 + $17 }' "/proc/$pid/stat" 2>/dev/null || true
		for child in $(pgrep -P "$pid"); do
			awk '{ print $14 + $15 }' "/proc/$child/stat" 2>/dev/null || true
		done
	done | awk '{ s += $1 } END { print s + 0 }'
}

# cpu_now SYSTEM: "machine cluster system opensearch pgbench" CPU so far, in
# clock ticks (machine: every CPU's busy time; cluster: the postmaster
# and its children, flusso's worker and shipper among them; system: those
# two, or the Rust daemon; pgbench: the processes of that name)
# shellcheck disable=SC2046
cpu_now() {
	local own
	if [ "$1" = flusso ]; then own=$(flusso_own); else own=$(rust_cpu); fi
	echo "$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat)" \
		"$(awk -v s="$(cluster_cpu)" -v hz="$hz" 'BEGIN { printf "%d", s * hz }')" "$own" \
		"$(proc_ticks "$(cat "$BENCH_DIR/opensearch/node.pid")")" \
		"$(proc_ticks $(pgrep -x pgbench || true))"
}

# cpu_share SYSTEM BEFORE AFTER SECONDS: the shares of a core between two
# cpu_now of SYSTEM
cpu_share() {
	awk -v sys="$1" -v a="$2" -v b="$3" -v t="$4" -v hz="$hz" -v cores="$(nproc)" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		for (i = 1; i <= 5; i++) d[i] = 100 * (y[i] - x[i]) / hz / t
		printf "CPU, %% of a core: machine %d of %d, PostgreSQL %d", d[1], 100 * cores, d[2]
		if (sys == "flusso") printf " (flusso\x27s worker and shipper %d)", d[3]
		else printf ", the daemon %d", d[3]
		printf ", OpenSearch %d", d[4]
		if (d[5] > 0) printf ", pgbench %d", d[5] }'
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

# caught_up ALIAS: a marker visible, and then (flusso) nothing queued or
# unresolved: flusso orders each document's versions, not one document's
# against another's, so a marker may be visible while a bulk's documents
# are still being shipped (polled every 100 ms: a psql each time)
caught_up() {
	marker "$1" || return 1
	[ "$system" = flusso ] || return 0
	wait_for "$1 drained" flusso_drained
}
flusso_drained() {
	[ "$(bench_psql -At -c "SELECT bool_and(ship_pending = 0 AND coalesce(lag_seconds, 0) = 0)
		FROM flusso_status()")" = t ] || { sleep 0.08; return 1; }
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

# ---------------------------------------------------------------- systems
# Each defines SYSTEM_start DB ALIAS (start it, on DB, into ALIAS; for the
# seed the wall time counts from here), SYSTEM_seeded (true once the seed
# is in OpenSearch), SYSTEM_pids (its external processes) and SYSTEM_stop.

flusso_start() {
	users_search_index "$os" "${2%users}" '{"replicas": 0}'
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
	kill "$rust_pid" 2>/dev/null || echo "  (the Rust flusso had already exited: see its flusso.log)"
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
	OPENSEARCH=$pgsync_opensearch ELASTICSEARCH_HOST=127.0.0.1 ELASTICSEARCH_PORT="$os_port" \\
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


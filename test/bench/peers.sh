#!/usr/bin/env bash
#
# peers.sh: flusso against two other systems that keep OpenSearch in sync
# with PostgreSQL, in one run, on one cluster and one OpenSearch node (the
# embedded one, test/opensearch/node.sh, on BENCH_OPENSEARCH_PORT, default
# 9298): the Rust flusso 0.15.1 (rust) and PGSync 7.3.0 (pgsync), as
# systems.sh installs and runs them.  Not part of make test.  With
# FLUSSO_OPENSEARCH_LINE=es8 or es9 the node is Elasticsearch's and the
# systems flusso and PGSync (the Rust flusso speaks OpenSearch alone).
#
# The document is users.sh's users index on all three: flusso and the Rust
# flusso read the same definition (users_definition; the two formats are
# the same); PGSync reads the users (email, name) and all their orders (id,
# total, status, created_at) and a plugin (systems.sh's pgsync_plugin) trims and
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
#     visible by realtime GET, and, for flusso, nothing is left to ship
#     (caught_up, systems.sh: a marker of flusso's may overtake a bulk's
#     documents), and the CPU time from the load's start.
#  3. updates: 100k single-row UPDATE transactions (pgbench, 4 clients, as
#     fast as they go); the time from their end until caught up.
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
case ${FLUSSO_OPENSEARCH_LINE:-2} in
es8 | es9) systems=${BENCH_SYSTEMS:-flusso pgsync} ;;
*) systems=${BENCH_SYSTEMS:-flusso rust pgsync} ;;
esac
probe="$FLUSSO_ROOT/test/bench/latency_probe.py"
source "$(dirname "$0")/systems.sh"

peers_install
peers_up

echo "peers.sh: $users users, $orders orders, $updates updates; pgbench at $rate tx/s for $seconds s; systems: $systems; on $engine_label"

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
	if caught_up "$alias"; then
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
	if caught_up "$alias"; then
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
	caught_up "$alias" && echo "  caught up $(elapsed "$t0" "$(clock)") s after the run"
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

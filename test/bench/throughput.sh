#!/usr/bin/env bash
#
# throughput.sh: the highest steady rate of changes flusso and the Rust
# flusso each follow, on one cluster and one OpenSearch node (systems.sh),
# flusso with the OpenSearch sink alone.
#
# For each system, in a database of its own: users.sh's tables at 200k
# users and 1M orders (times BENCH_SCALE), seeded by the system; then
# pgbench runs users.sh's update mix (an order's total and status
# changed, another order moved to another user: two documents or three per
# transaction) at a fixed rate for BENCH_WINDOW (default 60) seconds, with
# synchronous commits, beside latency_probe.py, which commits a user's new
# name about ten times a second and polls by realtime _mget until it is
# visible.  The system follows the rate when pgbench kept it (at least 90 %
# of the rate done) and every probe's change was visible within
# BENCH_MAX_LAG_MS (default 1000) ms, and once pgbench stopped it had
# caught up (systems.sh's caught_up: a marker visible, and for flusso
# nothing left to ship) within that time too: its lag stayed under a
# second for the whole window.  Rates double from BENCH_RATE_START (default 250) tx/s
# until one is not followed, then the interval between the last followed
# and the first not is halved BENCH_BISECT (default 3) times.  Between two
# rates the system catches up (a marker visible) and the machine rests
# for 5 s.  Prints each rate tried, the highest followed per system, and
# flusso's over the Rust flusso's.  Not part of make test.
#
# BENCH_SYSTEMS (default "flusso rust") chooses the systems.
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"
source "$(dirname "$0")/users.sh"

users=$(scaled 200000)
orders=$(scaled 1000000)
window=${BENCH_WINDOW:-60}
start_rate=${BENCH_RATE_START:-250}
bisect=${BENCH_BISECT:-3}
max_lag=${BENCH_MAX_LAG_MS:-1000}
systems=${BENCH_SYSTEMS:-flusso rust}
probe="$FLUSSO_ROOT/test/bench/latency_probe.py"
source "$(dirname "$0")/systems.sh"

peers_install
peers_up
mix=$(users_update_script)
bench_psql -c "ALTER SYSTEM SET synchronous_commit = on" -c "SELECT pg_reload_conf()" >/dev/null
echo "throughput.sh: $users users, $orders orders; windows of $window s, lag under $max_lag ms;" \
	"from $start_rate tx/s; systems: $systems"

# follows ALIAS RATE: the mix at RATE tx/s for the window beside the probe;
# prints what happened, and is true when the rate was followed
follows() {
	local alias=$1 rate=$2 out="$BENCH_DIR/pgbench_throughput.out" probe_out pgbench tps max lost t0 behind
	local connection=(-h "$BENCH_DIR" -p "$BENCH_PORT" -U postgres -d "$BENCH_DB") cpu0 cpu1 w0 w1
	as_cluster_user "$PG_BINDIR/pgbench" -n -c 8 -j 2 -R "$rate" -T "$window" -f "$mix" \
		-D orders="$orders" -D users="$users" "${connection[@]}" >"$out" 2>&1 &
	pgbench=$!
	sleep 1
	cpu0=$(cpu_now "$system")
	w0=$(clock)
	probe_out=$(as_cluster_user python3 "$probe" --seconds "$((window - 2))" --no-table \
		--opensearch "127.0.0.1:$os_port" --alias "$alias" -- "$PG_BINDIR/psql" "${connection[@]}")
	cpu1=$(cpu_now "$system")
	w1=$(clock)
	wait "$pgbench" || true
	t0=$(clock)
	caught_up "$alias" || return 1
	behind=$(awk -v s="$(elapsed "$t0" "$(clock)")" 'BEGIN { printf "%d", s * 1000 }')
	tps=$(awk '/^tps = / { print $3 }' "$out")
	max=$(sed -n 's/^OpenSearch.* max \([0-9]*\) ms.*/\1/p' <<<"$probe_out")
	lost=$(sed -n 's/.*, \([0-9]*\) not visible within 30 s/\1/p' <<<"$probe_out")
	printf '  %6d tx/s: pgbench %s tps; commit -> visible %s; caught up %d ms after\n' "$rate" "${tps:-?}" \
		"$(grep '^OpenSearch' <<<"$probe_out" | sed 's/^OpenSearch (realtime _mget): *//')" "$behind"
	echo "              $(cpu_share "$system" "$cpu0" "$cpu1" "$(elapsed "$w0" "$w1")")"
	awk -v tps="${tps:-0}" -v rate="$rate" -v max="${max:-999999}" -v limit="$max_lag" -v lost="${lost:-1}" \
		-v behind="$behind" 'BEGIN { exit !(tps >= 0.9 * rate && max < limit && lost == 0 && behind < limit) }'
}

# rest ALIAS: caught up (systems.sh), then 5 s of quiet
rest() {
	caught_up "$1" || return 1
	sleep 5
}

declare -A best
for system in $systems; do
	echo "== $system"
	export BENCH_DB=${system}_throughput
	alias=${system}-tp-users
	BENCH_DB=postgres bench_psql -c "CREATE DATABASE $BENCH_DB" >/dev/null
	if [ "$system" = flusso ]; then users_tables >/dev/null; else users_plain_tables >/dev/null; fi
	users_load "$users" "$orders" >/dev/null
	bench_psql -c "INSERT INTO users VALUES (0, 'marker@example.com', 'marker 0')" \
		-c "VACUUM ANALYZE users, orders" >/dev/null
	"${system}_start" "$BENCH_DB" "$alias"
	wait_for "$system seed" "${system}_seeded"
	rest "$alias"

	good=0
	bad=
	rate=$start_rate
	while [ -z "$bad" ]; do
		if follows "$alias" "$rate"; then
			good=$rate
			rate=$((rate * 2))
		else
			bad=$rate
		fi
		rest "$alias" || break
	done
	for _ in $(seq "$bisect"); do
		[ -n "$bad" ] || break
		rate=$(((good + bad) / 2))
		[ "$rate" -gt "$good" ] || break
		if follows "$alias" "$rate"; then good=$rate; else bad=$rate; fi
		rest "$alias" || break
	done
	best[$system]=$good
	echo "  $system follows $good tx/s (not $bad)"
	echo "  afterwards: $(differ "$alias") documents differ from a fresh build"
	"${system}_stop" "$alias"
done

echo "== summary ($users users, $orders orders; lag under $max_lag ms for $window s)"
for system in $systems; do
	echo "$system: ${best[$system]} tx/s"
done
if [ -n "${best[flusso]:-}" ] && [ -n "${best[rust]:-}" ]; then
	awk -v a="${best[flusso]}" -v b="${best[rust]}" \
		'BEGIN { if (b == 0) print "flusso / rust: ?"; else printf "flusso / rust: %.2f\n", a / b }'
fi

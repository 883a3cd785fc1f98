#!/usr/bin/env bash
#
# latency.sh: commit -> visible under a steady load.
#
# 50k users and 250k orders (times BENCH_SCALE) and the users index of
# users.sh, with the table sink and an OpenSearch sink (a real node,
# test/opensearch/, on BENCH_OPENSEARCH_PORT, default 9298).  pgbench runs
# seed.sh's update mix (an order updated, another moved to another user)
# at a steady BENCH_RATE (default 200) transactions a second for
# BENCH_SECONDS (default 35), while latency_probe.py, about ten times a
# second, commits an update of a user's name and polls until that name is
# visible in flusso_docs.users and by realtime _mget in OpenSearch.
# Printed: p50/p95/p99/max commit -> visible for each sink, the CPU time
# of the worker and the shipper over the run, and pgbench's tps and
# latency against the reference: the same run (pgbench and the probe's
# updates, the probe polling nothing) before the index exists.  The probe's
# polls (a psql query and an HTTP request every 2 ms) cost CPU pgbench
# would have, so the index's own cost to pgbench is measured by a third
# run like the reference, with the index live (BENCH_THIRD=0 skips it).
#
# BENCH_SLOW_NEIGHBOUR=1 adds, before the measured run, a second index
# beside the users index whose documents are dear: over a table of notes,
# its raw filter sleeping 0.2 s a row; during the run a note is inserted
# every second, so that a fifth of the worker's time goes to it.  Printed
# besides: its own lag at the end, and how many notes it had built.
#
# Commits are synchronous (synchronous_commit = on, unlike the other
# benchmarks): the worker decodes flushed WAL only, and an asynchronous
# commit is flushed by the WAL writer up to 3 x wal_writer_delay later,
# which would be measured too.  BENCH_SYNC_COMMIT=off measures that.
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"
source "$(dirname "$0")/users.sh"

users=$(scaled 50000)
orders=$(scaled 250000)
seconds=${BENCH_SECONDS:-35}
rate=${BENCH_RATE:-200}
os_port=${BENCH_OPENSEARCH_PORT:-9298}
os="http://127.0.0.1:$os_port"
node="$FLUSSO_ROOT/test/opensearch/node.sh"
probe="$FLUSSO_ROOT/test/bench/latency_probe.py"

bench_start
bench_psql -c "ALTER SYSTEM SET synchronous_commit = '${BENCH_SYNC_COMMIT:-on}'" \
	-c "SELECT pg_reload_conf()" >/dev/null
bash "$node" start "$BENCH_DIR/opensearch" "$os_port" >/dev/null
trap 'bash "$node" stop "$BENCH_DIR/opensearch" >/dev/null; [ -n "${BENCH_KEEP:-}" ] || bench_stop' EXIT
echo "latency.sh: $users users, $orders orders; pgbench at $rate tx/s for $seconds s;" \
	"synchronous_commit $(bench_psql -At -c 'SHOW synchronous_commit');" \
	"flusso.naptime $(bench_psql -At -c 'SHOW flusso.naptime')"

users_tables >/dev/null
users_load "$users" "$orders" >/dev/null
bench_psql -c "VACUUM ANALYZE users, orders"

script=$(users_update_script)

connection=(-h "$BENCH_DIR" -p "$BENCH_PORT" -U postgres -d postgres)

# load [PROBE ARGS...]: pgbench at $rate tx/s beside the probe; prints the
# probe's lines, then "pgbench TPS LATENCY_MS STDDEV_MS LAG_MS"
load() {
	local out="$BENCH_DIR/pgbench.out" wal0 wal1
	wal0=$(bench_psql -At -c "SELECT pg_current_wal_insert_lsn()")
	as_cluster_user "$PG_BINDIR/pgbench" -n -c 4 -j 2 -R "$rate" -T "$seconds" -f "$script" \
		-D orders="$orders" -D users="$users" "${connection[@]}" >"$out" 2>&1 &
	local pgbench=$!
	as_cluster_user python3 "$probe" --seconds "$seconds" "$@" -- "$PG_BINDIR/psql" "${connection[@]}"
	wait "$pgbench"
	wal1=$(bench_psql -At -c "SELECT pg_current_wal_insert_lsn() - '$wal0'")
	awk -v wal="$wal1" '/^tps = / { tps = $3 } /^latency average = / { lat = $4 } /^latency stddev = / { sd = $4 }
		/^rate limit schedule lag: avg/ { lag = $6 }
		END { print "pgbench", tps, lat, sd, lag, wal }' "$out"
}

# ticks PID: the CPU time PID has used so far, in clock ticks
ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

pid_of() {
	bench_psql -At -c "SELECT pid FROM pg_stat_activity WHERE backend_type = '$1'"
}

# the reference: the same load, no index
reference=$(load --commit-only)

# the index, with both sinks, seeded and served
users_index
wait_until "SELECT phase = 'live' FROM flusso_status()"
bench_psql -c "CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$os', index_prefix 'lat-')"
bench_psql -o /dev/null -c "SELECT flusso_set_sinks('users', ARRAY['table', 'search'], '{\"replicas\": 0}')"
wait_until "SELECT (SELECT phase = 'live' AND ship_pending = 0 FROM flusso_status())
	AND EXISTS (SELECT FROM flusso.opensearch_generation WHERE state = 'served')
	AND NOT EXISTS (SELECT FROM flusso.opensearch_generation WHERE state <> 'served')"

neighbour=
if [ "${BENCH_SLOW_NEIGHBOUR:-0}" = 1 ]; then
	bench_psql -o /dev/null -c "CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)" \
		-c "INSERT INTO notes VALUES (0, 'the first note')" \
		-c "SELECT flusso_create_index('slow', '{\"version\": 1, \"table\": \"notes\", \"primary_key\": \"id\",
			\"filters\": [{\"raw\": \"pg_sleep(0.2) IS NOT NULL\"}], \"fields\": [{\"text\": \"body\", \"required\": true}]}')" \
		-c "SELECT count(*) FROM flusso_provision()"
	wait_until "SELECT bool_and(phase = 'live') FROM flusso_status()"
	(
		for i in $(seq 1 "$seconds"); do
			bench_psql -c "INSERT INTO notes VALUES ($i, 'note $i')"
			sleep 1
		done
	) &
	neighbour=$!
fi

worker=$(pid_of 'flusso worker')
shipper=$(pid_of 'flusso shipper')
w0=$(ticks "$worker")
s0=$(ticks "$shipper")
measured=$(load --opensearch "127.0.0.1:$os_port" --alias lat-users)
w1=$(ticks "$worker")
s1=$(ticks "$shipper")
if [ -n "$neighbour" ]; then
	wait "$neighbour"
	bench_psql -At -c "SELECT 'slow neighbour: ' || (SELECT count(*) FROM flusso_docs.slow) || ' of '
		|| (SELECT count(*) FROM notes) || ' notes built, its own lag ' || round(lag_seconds::numeric, 1)
		|| ' s, the users index''s ' || (SELECT round(lag_seconds::numeric, 1) FROM flusso_status()
		WHERE index = 'users') || ' s' FROM flusso_status() WHERE index = 'slow'"
fi
wait_until "SELECT ship_pending = 0 FROM flusso_status() WHERE index = 'users'"
# the reference's run again, the index live
third=
[ "${BENCH_THIRD:-1}" = 0 ] || third=$(load --commit-only)
wait_until "SELECT ship_pending = 0 FROM flusso_status() WHERE index = 'users'"
wait_until "SELECT bool_and(phase = 'live') FROM flusso_status()"
problems=$(bench_psql -At -c "SELECT count(*) FROM flusso_verify('users')")

grep -v '^pgbench' <<<"$measured"
awk -v r="$(grep '^pgbench' <<<"$reference")" -v m="$(grep '^pgbench' <<<"$measured")" \
	-v t="$(grep '^pgbench' <<<"$third")" \
	-v w="$((w1 - w0))" -v s="$((s1 - s0))" -v secs="$seconds" -v hz="$(getconf CLK_TCK)" \
	-v bad="$problems" 'BEGIN {
	split(r, a); split(m, b); split(t, c)
	printf "CPU over the %d s run: worker %.1f s (%.1f %% of a core), shipper %.1f s (%.1f %%)\n",
		secs, w / hz, 100 * w / hz / secs, s / hz, 100 * s / hz / secs
	printf "pgbench without the index: %.1f tps, latency %.2f ms (stddev %.2f, schedule lag %.2f); WAL %.1f MB\n", a[2], a[3], a[4], a[5], a[6] / 1048576
	printf "pgbench with the index:    %.1f tps, latency %.2f ms (stddev %.2f, schedule lag %.2f); WAL %.1f MB\n", b[2], b[3], b[4], b[5], b[6] / 1048576
	printf "ratio (with / without): tps %.2f, latency %.2f\n", b[2] / a[2], b[3] / a[3]
	if (t != "") {
		printf "pgbench with the index, the probe polling nothing: %.1f tps, latency %.2f ms (stddev %.2f, schedule lag %.2f); WAL %.1f MB\n", c[2], c[3], c[4], c[5], c[6] / 1048576
		printf "ratio (with, polling nothing / without): tps %.2f, latency %.2f (goal: without / with >= 0.9)\n", c[2] / a[2], c[3] / a[3]
	}
	printf "flusso_verify afterwards: %d documents differ\n", bad
}'

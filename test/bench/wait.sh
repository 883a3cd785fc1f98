#!/usr/bin/env bash
#
# wait.sh: how long flusso_wait() takes to return after a commit under a
# steady load, and what sessions waiting cost the others.
#
# 50k users and 250k orders (times BENCH_SCALE), the users index of
# users.sh, and a real OpenSearch node (test/opensearch/, on
# BENCH_OPENSEARCH_PORT, default 9298).  pgbench runs users.sh's update mix
# at a steady BENCH_RATE (default 200) tx/s, with synchronous commits,
# while one session, ten times a second, updates a user's name, commits,
# and calls flusso_wait(): BENCH_PROBES (default 200) times for each of
#   table      the index with the table sink alone;
#   realtime   the table sink and OpenSearch: acknowledged by OpenSearch
#              (a realtime GET sees it);
#   searchable the same, searchable => true: visible to _search.
# The time is the probe's own (clock_timestamp() in a procedure, from its
# COMMIT to flusso_wait()'s return); printed: p50, p99 and max, and how
# many calls returned false.
#
# Then the cost to the others, for each sink set: pgbench at the rate for
# BENCH_SECONDS (default 30) beside BENCH_WAITERS (default 50) sessions,
# each changing a user of its own, committing and calling flusso_wait()
# over and over, so that about all of them wait at any time; and the
# reference, the same with the 50 sessions sleeping 10 ms instead of
# waiting.  Printed: pgbench's tps and latency in both and their ratio,
# the sessions' waits (how many, and their p50 and p99), and the CPU of
# the worker and the shipper.  Not part of make test.
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"
source "$(dirname "$0")/users.sh"

users=$(scaled 50000)
orders=$(scaled 250000)
rate=${BENCH_RATE:-200}
probes=${BENCH_PROBES:-200}
seconds=${BENCH_SECONDS:-30}
waiters=${BENCH_WAITERS:-50}
os_port=${BENCH_OPENSEARCH_PORT:-9298}
os="http://127.0.0.1:$os_port"
node="$FLUSSO_ROOT/test/opensearch/node.sh"

bench_start "max_connections = 200"
bench_psql -c "ALTER SYSTEM SET synchronous_commit = on" -c "SELECT pg_reload_conf()" >/dev/null
bash "$node" build >/dev/null
bash "$node" start "$BENCH_DIR/opensearch" "$os_port" >/dev/null
trap 'bash "$node" stop "$BENCH_DIR/opensearch" >/dev/null; [ -n "${BENCH_KEEP:-}" ] || bench_stop' EXIT
echo "wait.sh: $users users, $orders orders; pgbench at $rate tx/s; $probes probes a mode;" \
	"$waiters sessions waiting for $seconds s"

users_tables >/dev/null
users_load "$users" "$orders" >/dev/null
bench_psql -c "VACUUM ANALYZE users, orders"
script=$(users_update_script)
connection=(-h "$BENCH_DIR" -p "$BENCH_PORT" -U postgres -d postgres)

# the probe: n times, a user's name changed and committed, then waited
# for; the milliseconds from the commit to the return, and false answers,
# recorded once at the end
bench_psql <<'SQL'
CREATE UNLOGGED TABLE wait_samples (mode text, ms float8, answered boolean);
CREATE PROCEDURE wait_probe(mode text, n int, nusers int, searchable boolean)
LANGUAGE plpgsql AS $$
DECLARE
	t timestamptz;
	ok boolean;
	ms float8[] := '{}';
	oks boolean[] := '{}';
BEGIN
	FOR i IN 1..n LOOP
		UPDATE users SET name = 'waited ' || i WHERE id = 1 + (i * 7919) % nusers;
		COMMIT;
		t := clock_timestamp();
		ok := flusso_wait('users', '10s', searchable);
		ms := ms || extract(epoch FROM clock_timestamp() - t) * 1000;
		oks := oks || ok;
		COMMIT;
		PERFORM pg_sleep(0.1);
	END LOOP;
	INSERT INTO wait_samples SELECT mode, m, o FROM unnest(ms, oks) u(m, o);
END $$;
-- a session changing user id, committing and waiting over and over for
-- seconds (or sleeping 10 ms instead: wait false); its waits recorded
CREATE PROCEDURE wait_loop(mode text, id int, seconds int, wait boolean) LANGUAGE plpgsql AS $$
DECLARE
	deadline timestamptz := clock_timestamp() + make_interval(secs => seconds);
	t timestamptz;
	ms float8[] := '{}';
	oks boolean[] := '{}';
	ok boolean;
BEGIN
	WHILE clock_timestamp() < deadline LOOP
		UPDATE users SET name = 'loop ' || clock_timestamp() WHERE users.id = wait_loop.id;
		COMMIT;
		IF wait THEN
			t := clock_timestamp();
			ok := flusso_wait('users', '10s');
			ms := ms || extract(epoch FROM clock_timestamp() - t) * 1000;
			oks := oks || ok;
			COMMIT;
		ELSE
			PERFORM pg_sleep(0.01);
		END IF;
	END LOOP;
	INSERT INTO wait_samples SELECT mode, m, o FROM unnest(ms, oks) u(m, o);
END $$;
SQL

# pgbench_run SECONDS: pgbench at the rate; prints "TPS LATENCY_MS"
pgbench_run() {
	local out="$BENCH_DIR/pgbench_wait.out"
	as_cluster_user "$PG_BINDIR/pgbench" -n -c 4 -j 2 -R "$rate" -T "$1" -f "$script" \
		-D orders="$orders" -D users="$users" "${connection[@]}" >"$out" 2>&1
	awk '/^tps = / { tps = $3 } /^latency average = / { lat = $4 } END { print tps, lat }' "$out"
}

# probe MODE SEARCHABLE: the probes beside pgbench, then their figures
probe() {
	local pgbench
	pgbench_run "$((probes / 10 + 10))" >/dev/null &
	pgbench=$!
	sleep 2
	bench_psql -c "CALL wait_probe('$1', $probes, $users, $2)"
	wait "$pgbench"
	bench_psql -At -F ' ' -c "SELECT '$1', round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1),
		round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 1), round(max(ms)::numeric, 1),
		count(*) FILTER (WHERE NOT answered), count(*) FROM wait_samples WHERE mode = '$1'"
}

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
pid_of() { bench_psql -At -c "SELECT pid FROM pg_stat_activity WHERE backend_type = '$1'"; }

# beside MODE WAIT: pgbench beside the sessions looping; prints "TPS
# LATENCY_MS WORKER_TICKS SHIPPER_TICKS"
beside() {
	local loops=() worker shipper w0 s0 result
	worker=$(pid_of 'flusso worker')
	shipper=$(pid_of 'flusso shipper')
	w0=$(ticks "$worker")
	s0=$([ -n "$shipper" ] && ticks "$shipper" || echo 0)
	for i in $(seq 1 "$waiters"); do
		bench_psql -c "CALL wait_loop('$1', $i, $((seconds + 4)), $2)" &
		loops+=($!)
	done
	sleep 2
	result=$(pgbench_run "$seconds")
	wait "${loops[@]}"
	echo "$result $(($(ticks "$worker") - w0)) $(($([ -n "$shipper" ] && ticks "$shipper" || echo 0) - s0))"
}

# cost LABEL: pgbench beside the sessions sleeping, then waiting
cost() {
	local sleeping waiting waits
	sleeping=$(beside "$1 sleeping" false)
	waiting=$(beside "$1" true)
	waits=$(bench_psql -At -F ' ' -c "SELECT count(*), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1),
		round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 1), count(*) FILTER (WHERE NOT answered)
		FROM wait_samples WHERE mode = '$1'")
	awk -v l="$1" -v a="$sleeping" -v b="$waiting" -v n="$waiters" -v waits="$waits" -v secs="$((seconds + 4))" \
		-v hz="$(getconf CLK_TCK)" 'BEGIN {
		split(a, x, " "); split(b, y, " "); split(waits, z, " ")
		printf "%s: pgbench beside %d sessions writing and sleeping 10 ms: %.1f tps, %.2f ms; writing and waiting: %.1f tps, %.2f ms (latency ratio %.2f)\n",
			l, n, x[1], x[2], y[1], y[2], y[2] / x[2]
		printf "%s: the sessions waited %d times (%.0f a second; p50 %.1f ms, p99 %.1f ms, false %d); worker %.1f %% of a core (sleeping: %.1f %%), shipper %.1f %% (%.1f %%)\n",
			l, z[1], z[1] / secs, z[2], z[3], z[4], 100 * y[3] / hz / secs, 100 * x[3] / hz / secs,
			100 * y[4] / hz / secs, 100 * x[4] / hz / secs
	}'
}

users_index
wait_until "SELECT phase = 'live' FROM flusso_status()"
table=$(probe table false)
table_cost=$(cost "table sink")

bench_psql -c "CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$os', index_prefix 'wait-')" >/dev/null
bench_psql -o /dev/null -c "SELECT flusso_set_sinks('users', ARRAY['table', 'search'], '{\"replicas\": 0}')"
wait_until "SELECT (SELECT phase = 'live' AND ship_pending = 0 FROM flusso_status())
	AND EXISTS (SELECT FROM flusso.opensearch_generation WHERE state = 'served')
	AND NOT EXISTS (SELECT FROM flusso.opensearch_generation WHERE state <> 'served')"
realtime=$(probe realtime false)
searchable=$(probe searchable true)
os_cost=$(cost "OpenSearch")
problems=$(bench_psql -At -c "SELECT count(*) FROM flusso_verify('users')")

echo "commit -> flusso_wait() returned, at $rate tx/s ($probes probes each):"
for line in "$table" "$realtime" "$searchable"; do
	read -r mode p50 p99 max false n <<<"$line"
	printf "  %-11s p50 %6.1f ms  p99 %6.1f ms  max %6.1f ms  false %d of %d\n" "$mode" "$p50" "$p99" "$max" "$false" "$n"
done
echo "$table_cost"
echo "$os_cost"
echo "flusso_verify afterwards: $problems documents differ"

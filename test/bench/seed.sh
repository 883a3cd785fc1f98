#!/usr/bin/env bash
#
# seed.sh: seeding, then the live path under pgbench.
#
# 1. 200k users and 1M orders (times BENCH_SCALE, default 1) are loaded; then
#    the users index is defined and the time until it is seeded and live is
#    measured.  The reference, in the same run: one CREATE TABLE AS SELECT
#    building the same documents into a logged table with its primary key.
#    Goal: seed <= 1.5 x the reference.
# 2. pgbench, 4 clients for BENCH_SECONDS (default 20) seconds, each
#    transaction updating an order and moving another to another user:
#    once before the index exists, once with it live.  Reported: the tps
#    ratio (goal >= 0.9), the seconds the worker takes to catch up once the
#    load stops (goal <= 2), and the worker's CPU time per change.
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"
source "$(dirname "$0")/users.sh"

users=$(scaled 200000)
orders=$(scaled 1000000)
seconds=${BENCH_SECONDS:-20}

bench_start
echo "seed.sh: $users users, $orders orders; pgbench for $seconds s"
users_tables
users_load "$users" "$orders"
bench_psql -c "VACUUM ANALYZE users, orders"

script=$(users_update_script)

# pgbench_tps: run the script with 4 clients, print its tps
pgbench_tps() {
	as_cluster_user "$PG_BINDIR/pgbench" -n -c 4 -j 4 -T "$seconds" -f "$script" \
		-D orders="$orders" -D users="$users" -h "$BENCH_DIR" -p "$BENCH_PORT" -U postgres postgres \
		| awk '/^tps = / { print $3 }'
}

# worker_cpu: CPU seconds the worker has used so far
worker_cpu() {
	local pid
	pid=$(bench_psql -At -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'flusso worker'")
	awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$pid/stat"
}

tps_without=$(pgbench_tps)

# 1. the seed
start=$(now)
users_index
wait_until "SELECT phase = 'live' FROM flusso_status()"
seeded=$(now)
reference=$(users_reference)
same=$(users_same)

# 2. the live path under load
captured=$(bench_psql -At -c "SELECT changes_captured FROM flusso_status()")
cpu=$(worker_cpu)
tps_with=$(pgbench_tps)
stopped=$(now)
lsn=$(bench_psql -At -c "SELECT pg_current_wal_insert_lsn()")
wait_until "SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name LIKE 'flusso_%'"
caught=$(now)
cpu=$(awk -v a="$cpu" -v b="$(worker_cpu)" 'BEGIN { print b - a }')
changes=$(bench_psql -At -c "SELECT changes_captured - $captured FROM flusso_status()")
verified=$(bench_psql -At -c "SELECT count(*) FROM flusso_verify('users')")

awk -v s="$start" -v e="$seeded" -v r="$reference" -v same="$same" -v n="$users" \
	-v t0="$tps_without" -v t1="$tps_with" -v st="$stopped" -v c="$caught" \
	-v cpu="$cpu" -v ch="$changes" -v bad="$verified" 'BEGIN {
	printf "seed %.2f s; reference CREATE TABLE AS SELECT %.2f s; documents equal to it: %d of %d\n", e - s, r, same, n
	printf "ratio (seed / reference): %.2f (goal <= 1.5)\n", (e - s) / r
	printf "pgbench tps without the index %.0f, with it %.0f: ratio %.2f (goal >= 0.9)\n", t0, t1, t1 / t0
	printf "caught up %.2f s after the load stopped (goal <= 2); worker CPU %.1f s for %d changes: %.1f us per change\n", c - st, cpu, ch, ch ? cpu * 1e6 / ch : 0
	printf "documents differing from a fresh build afterwards: %d\n", bad
}'

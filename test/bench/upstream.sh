#!/usr/bin/env bash
#
# upstream.sh: flusso on a subscriber.  A publisher without flusso (a
# plain cluster, as a managed PostgreSQL is) holds 50k users and 250k
# orders (times BENCH_SCALE) and publishes them; the bench cluster, with
# flusso, subscribes and keeps users.sh's users index.  While pgbench runs
# users.sh's update mix on the publisher at BENCH_RATE (default 200) tx/s,
# upstream_probe.py commits BENCH_PROBES (default 200) name changes on the
# publisher and times, taking turns, the row applied by the subscription
# (the reference, polled every 1 ms) and flusso_wait(..., upstream_lsn =>
# the publisher's position) returning true with the document right.
# Printed: p50/p99/max of each and their ratio, and how many waits were
# false or early, and the subscriber's cost: CPU of its apply worker and
# of flusso's worker over the run; once with the subscription's
# synchronous_commit off (PostgreSQL's default), once local.  Not part of
# make test.
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"
source "$(dirname "$0")/users.sh"

users=$(scaled 50000)
orders=$(scaled 250000)
rate=${BENCH_RATE:-200}
probes=${BENCH_PROBES:-200}
pub_dir=$BENCH_DIR-publisher
pub_port=$((BENCH_PORT + 1))

pub_psql() {
	as_cluster_user "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$pub_dir" -p "$pub_port" \
		-U postgres -d postgres "$@"
}
pub_stop() {
	if [ -f "$pub_dir/data/postmaster.pid" ]; then
		as_cluster_user "$PG_BINDIR/pg_ctl" -D "$pub_dir/data" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$pub_dir"
}

bench_start
pub_stop
trap '[ -n "${BENCH_KEEP:-}" ] || { pub_stop; bench_stop; }' EXIT
# the publisher: no flusso, logical replication, synchronous commits
mkdir -p "$pub_dir"
[ "$(id -u)" -eq 0 ] && chown "$CLUSTER_USER": "$pub_dir"
as_cluster_user "$PG_BINDIR/initdb" -D "$pub_dir/data" -A trust -U postgres >/dev/null
printf '%s\n' "port = $pub_port" "listen_addresses = ''" "unix_socket_directories = '$pub_dir'" \
	"wal_level = logical" "shared_buffers = 512MB" "max_wal_size = 4GB" |
	as_cluster_user tee -a "$pub_dir/data/postgresql.conf" >/dev/null
as_cluster_user "$PG_BINDIR/pg_ctl" -D "$pub_dir/data" -l "$pub_dir/server.log" -w start >/dev/null
echo "upstream.sh: $users users, $orders orders on the publisher; pgbench there at $rate tx/s;" \
	"$probes probes"

# the same tables on both (DDL is not replicated); the rows on the publisher
users_tables >/dev/null
(
	BENCH_DIR=$pub_dir BENCH_PORT=$pub_port
	users_plain_tables >/dev/null
	users_load "$users" "$orders" >/dev/null
	bench_psql -c "VACUUM ANALYZE users, orders" -c "CREATE PUBLICATION app FOR TABLE users, orders"
)
t0=$(date +%s.%N)
bench_psql -c "CREATE SUBSCRIPTION sub CONNECTION 'host=$pub_dir port=$pub_port user=postgres dbname=postgres' PUBLICATION app"
until [ "$(bench_psql -At -c "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate = 'r'")" = 2 ]; do
	sleep 0.5
done
echo "subscription: initial copy of both tables in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }") s"
users_index
until [ "$(bench_psql -At -c "SELECT phase FROM flusso_status() WHERE index = 'users'")" = live ]; do
	sleep 0.5
done
echo "index: seeded from the copied rows in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }") s since the subscription was created"

script=$(BENCH_DIR=$pub_dir users_update_script)
# the probes at each synchronous_commit of the subscription: off, its
# default (the apply worker's commits reach flusso when the WAL writer
# flushes them), and local (each flushed as it commits)
for sync in off local; do
	bench_psql -c "ALTER SUBSCRIPTION sub SET (synchronous_commit = '$sync')"
	echo "-- the subscription's synchronous_commit = $sync"
	as_cluster_user "$PG_BINDIR/pgbench" -n -c 4 -j 2 -R "$rate" -T "$((probes / 8 + 10))" -f "$script" \
		-D orders="$orders" -D users="$users" -h "$pub_dir" -p "$pub_port" -U postgres -d postgres \
		>"$BENCH_DIR/pgbench.out" 2>&1 &
	pgbench=$!
	sleep 2
	ticks=$(process_ticks 'logical replication apply worker' 'logical replication worker' 'flusso worker')
	started=$(date +%s.%N)
	as_cluster_user python3 "$FLUSSO_ROOT/test/bench/upstream_probe.py" --probes "$probes" --users "$users" \
		--publisher "$PG_BINDIR/psql -h $pub_dir -p $pub_port -U postgres -d postgres" \
		--subscriber "$PG_BINDIR/psql -h $BENCH_DIR -p $BENCH_PORT -U postgres -d postgres"
	elapsed=$(awk "BEGIN { print $(date +%s.%N) - $started }")
	cpu=$(cpu_since "$ticks" 'logical replication apply worker' 'logical replication worker' 'flusso worker')
	wait "$pgbench"
	awk '/^tps = / { printf "pgbench on the publisher: %.0f tx/s\n", $3 }' "$BENCH_DIR/pgbench.out"
	echo "subscriber CPU (apply worker and flusso worker): $(awk "BEGIN { printf \"%.0f\", 100 * $cpu / $elapsed }")% of a core"
done

#!/usr/bin/env bash
#
# idle.sh: what flusso costs while nothing happens.
#
# Two databases, each with one small index: in "live" the index is seeded
# and streaming; in "waiting" the index's table is left out of the
# publication (the index was created without flusso_provision()), so the
# worker waits for the publication to cover it.  When the embedded
# OpenSearch node is built (bash test/opensearch/node.sh build), it is
# started on BENCH_OPENSEARCH_PORT (default 9298) and the live index also
# ships there, so a shipper is measured too.  Nothing is written while the
# processes are measured: the CPU time (utime + stime in /proc/PID/stat)
# each worker, the launcher and the shipper use over BENCH_SECONDS
# (default 60) seconds, printed as CPU seconds per idle hour.
# BENCH_NAPTIME sets flusso.naptime (default 100ms), how often an idle
# worker wakes to poll for WAL: most of what it costs when nothing happens.
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"

seconds=${BENCH_SECONDS:-60}
os_port=${BENCH_OPENSEARCH_PORT:-9298}
node="$FLUSSO_ROOT/test/opensearch/node.sh"

wait_until() {
	until [ "$(BENCH_DB=$1 bench_psql -At -c "$2")" = t ]; do
		sleep 0.1
	done
}

# define DATABASE: the table, the extension and the index
define() {
	bench_psql -c "CREATE DATABASE $1"
	BENCH_DB=$1 bench_psql -o /dev/null <<'SQL'
CREATE EXTENSION flusso;
CREATE TABLE books (id int PRIMARY KEY, title text NOT NULL);
INSERT INTO books SELECT i, 'book ' || i FROM generate_series(1, 1000) i;
CREATE TABLE notes (id int PRIMARY KEY, body text);
SELECT flusso_create_index('books', $$
version: 1
table: books
primary_key: id
fields:
  - text: title
    required: true
$$);
SQL
}

# ticks PID: the CPU time PID has used so far, in clock ticks
ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

pid_of() {
	bench_psql -At -c "SELECT pid FROM pg_stat_activity WHERE backend_type = '$1'
		AND datname IS NOT DISTINCT FROM ${2:-NULL}"
}

bench_start
if [ -n "${BENCH_NAPTIME:-}" ]; then
	bench_psql -c "ALTER SYSTEM SET flusso.naptime = '$BENCH_NAPTIME'" -c "SELECT pg_reload_conf()" >/dev/null
fi
echo "idle.sh: CPU time of idle processes over $seconds s, flusso.naptime $(bench_psql -At -c 'SHOW flusso.naptime')"

define live
BENCH_DB=live bench_psql -o /dev/null -c "SELECT count(*) FROM flusso_provision()"
wait_until live "SELECT phase = 'live' FROM flusso_status()"

if [ -f "$FLUSSO_ROOT/test/opensearch/target/line${FLUSSO_OPENSEARCH_LINE:-2}/.built" ]; then
	bash "$node" start "$BENCH_DIR/opensearch" "$os_port" >/dev/null
	trap 'bash "$node" stop "$BENCH_DIR/opensearch" >/dev/null; [ -n "${BENCH_KEEP:-}" ] || bench_stop' EXIT
	BENCH_DB=live bench_psql -o /dev/null <<SQL
CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url 'http://127.0.0.1:$os_port', index_prefix 'idle-');
SELECT flusso_set_sinks('books', ARRAY['table', 'search'], '{"replicas": 0}');
SQL
	wait_until live "SELECT (SELECT phase = 'live' AND ship_pending = 0 FROM flusso_status())
		AND EXISTS (SELECT FROM flusso.opensearch_generation WHERE state = 'served')
		AND NOT EXISTS (SELECT FROM flusso.opensearch_generation WHERE state <> 'served')"
fi

define waiting
# a publication that covers another table, not the index's
BENCH_DB=waiting bench_psql -c "CREATE PUBLICATION flusso FOR TABLE notes"
wait_until waiting "SELECT last_error LIKE '%publication%' FROM flusso_status()"

sleep 2
live_pid=$(pid_of 'flusso worker' "'live'")
waiting_pid=$(pid_of 'flusso worker' "'waiting'")
launcher_pid=$(pid_of 'flusso launcher')
shipper_pid=$(pid_of 'flusso shipper' "'live'")
pids="$live_pid $waiting_pid $launcher_pid $shipper_pid"
before=$(for pid in $pids; do ticks "$pid"; done)
sleep "$seconds"
after=$(for pid in $pids; do ticks "$pid"; done)

awk -v b="$before" -v a="$after" -v s="$seconds" -v hz="$(getconf CLK_TCK)" 'BEGIN {
	n = split(b, t0); split(a, t1)
	split("worker, live index|worker, index waiting for the publication|launcher|shipper, live index", name, "|")
	for (i = 1; i <= n; i++)
		printf "%-42s %6.1f CPU s per idle hour (%d ticks in %d s)\n", name[i] ":",
			(t1[i] - t0[i]) / hz * 3600 / s, t1[i] - t0[i], s
}'

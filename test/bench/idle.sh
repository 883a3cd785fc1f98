#!/usr/bin/env bash
#
# idle.sh: what flusso costs while nothing happens.
#
# Two databases, each with one small index: in "live" the index is seeded
# and streaming; in "waiting" the index's table is left out of the
# publication (the index was created without flusso_provision()), so the
# worker waits for the publication to cover it.  Nothing is written while
# the processes are measured: the CPU time (utime + stime in
# /proc/PID/stat) each worker and the launcher use over BENCH_SECONDS
# (default 60) seconds, printed as CPU seconds per idle hour.
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"

seconds=${BENCH_SECONDS:-60}

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
echo "idle.sh: CPU time of idle processes over $seconds s"

define live
BENCH_DB=live bench_psql -o /dev/null -c "SELECT count(*) FROM flusso_provision()"
wait_until live "SELECT phase = 'live' FROM flusso_status()"

define waiting
# a publication that covers another table, not the index's
BENCH_DB=waiting bench_psql -c "CREATE PUBLICATION flusso FOR TABLE notes"
wait_until waiting "SELECT last_error LIKE '%publication%' FROM flusso_status()"

sleep 2
live_pid=$(pid_of 'flusso worker' "'live'")
waiting_pid=$(pid_of 'flusso worker' "'waiting'")
launcher_pid=$(pid_of 'flusso launcher')
before="$(ticks "$live_pid") $(ticks "$waiting_pid") $(ticks "$launcher_pid")"
sleep "$seconds"
after="$(ticks "$live_pid") $(ticks "$waiting_pid") $(ticks "$launcher_pid")"

awk -v b="$before" -v a="$after" -v s="$seconds" -v hz="$(getconf CLK_TCK)" 'BEGIN {
	split(b, t0); split(a, t1)
	split("worker, live index|worker, index waiting for the publication|launcher", name, "|")
	for (i = 1; i <= 3; i++)
		printf "%-42s %6.1f CPU s per idle hour (%d ticks in %d s)\n", name[i] ":",
			(t1[i] - t0[i]) / hz * 3600 / s, t1[i] - t0[i], s
}'

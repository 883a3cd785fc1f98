#!/usr/bin/env bash
#
# live.sh: catch-up of the live path.  A users index (trimmed lower-cased
# email, name, the last 5 orders by date with total and status, the order
# count) is defined on empty tables; then 200k users and 1M orders (times
# BENCH_SCALE, default 1) are loaded, and the time until the worker has
# confirmed past the load is measured.  The reference, in the same run: one
# CREATE TABLE AS SELECT building the same documents from the loaded rows,
# with its primary key.  Goal: catch-up <= 2.0 x the reference.
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"
source "$(dirname "$0")/users.sh"

users=$(scaled 200000)
orders=$(scaled 1000000)

bench_start
echo "live.sh: $users users, $orders orders"

users_tables
users_index

# the index is seeded (there is nothing to seed) and live
wait_until "SELECT bool_and(phase = 'live') FROM flusso_status()"

start=$(now)
users_load "$users" "$orders"
loaded=$(now)
lsn=$(bench_psql -At -c "SELECT pg_current_wal_insert_lsn()")
wait_until "SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name LIKE 'flusso_%'"
caught=$(now)
reference=$(users_reference)
same=$(users_same)
stats=$(bench_psql -At -c "SELECT changes_captured || ' changes, ' || documents_written || ' documents written, ' || batches || ' batches' FROM flusso_status()")

awk -v s="$start" -v l="$loaded" -v c="$caught" -v r="$reference" -v same="$same" -v n="$users" -v st="$stats" 'BEGIN {
	printf "load %.1f s; caught up %.1f s after the load ended, %.1f s after it began (%s)\n", l - s, c - l, c - s, st
	printf "reference CREATE TABLE AS SELECT: %.1f s; documents equal to it: %d of %d\n", r, same, n
	printf "ratio (catch-up after load / reference): %.2f; (load start to caught up) / (load + reference): %.2f (goal <= 2.0)\n", (c - l) / r, (c - s) / ((l - s) + r)
}'

#!/usr/bin/env bash
#
# scale.sh: the users index at 1x and 10x the bench data set in one run
# (200k users and 1M orders, then 2M users and 10M orders; BENCH_SIZES,
# default "1 10", gives the multiples; 0.01 is a quick try), flusso and the Rust flusso on one
# cluster and one OpenSearch node (systems.sh).  At each size, each in a
# database of its own, dropped after it:
#   1. seed: the rows loaded, then the system started (flusso: the index
#      created with the OpenSearch sink alone); the time until every
#      document is in OpenSearch;
#   2. bulk: the system running on empty tables (but for user 0); the rows
#      loaded in two transactions (users, then orders); the time from the
#      load's end until a marker committed after it is visible by realtime
#      GET and (flusso) nothing is left to ship (caught_up, systems.sh);
#   3. table: flusso alone, its table sink seeded (the index created with
#      the table sink only) beside the reference measured in the same
#      database: one CREATE TABLE AS SELECT building the same documents
#      (users.sh), the fastest one-statement build.
# For each step: seconds, seconds per million documents, the CPU each
# part used over it (systems.sh's cpu_share), and the peaks,
# sampled every second, of the private memory (RssAnon: not the shared
# buffers) of flusso's worker and shipper, or of the Rust daemon, of the
# outbox's size (flusso.outbox with its indexes) and of the WAL the slot
# retains (from its restart_lsn).  Then, per system and step, the cost
# per million documents at the largest size over that at the smallest
# (goal for flusso: time at 10x at most 11x the time at 1x, a ratio per
# million of at most 1.1).  A step that does not end within BENCH_TIMEOUT
# (default 1800) seconds is said so, and the system's larger sizes are
# skipped.  BENCH_SYSTEMS (default "flusso rust") chooses the systems.
# Not part of make test; at 10x it needs about 10 GB of disk.
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"
source "$(dirname "$0")/users.sh"

sizes=${BENCH_SIZES:-1 10}
systems=${BENCH_SYSTEMS:-flusso rust}
source "$(dirname "$0")/systems.sh"

peers_install
peers_up
bench_psql -c "ALTER SYSTEM SET max_wal_size = '8GB'" -c "SELECT pg_reload_conf()" >/dev/null
echo "scale.sh: sizes $sizes x (200k users, 1M orders); systems: $systems"

# process_kb PID: its RssAnon in kB (0 when gone)
process_kb() {
	awk '/^RssAnon:/ { print $2; found = 1 } END { if (!found) print 0 }' "/proc/$1/status" 2>/dev/null || echo 0
}

# sample OUT SYSTEM: every second until killed, the peaks so far into OUT:
# "worker_kB shipper_kB outbox_bytes wal_retained_bytes" (Rust: its
# daemon's memory as the worker's)
sample() {
	local out=$1 system=$2 w=0 s=0 o=0 r=0 kb pid type row outbox wal
	while :; do
		row=$(bench_psql -At -F ' ' -c "SELECT
			coalesce((SELECT string_agg(replace(backend_type, 'flusso ', '') || '=' || pid, ',')
				FROM pg_stat_activity WHERE backend_type IN ('flusso worker', 'flusso shipper')
				AND datname = current_database()), '-'),
			coalesce(pg_total_relation_size(to_regclass('flusso.outbox')), 0),
			coalesce((SELECT max(pg_current_wal_lsn() - restart_lsn) FROM pg_replication_slots
				WHERE database = current_database()), 0)::bigint" 2>/dev/null) || { sleep 1; continue; }
		read -r pids outbox wal <<<"$row"
		if [ "$system" = rust ]; then
			# started after this sampler: look the daemon up each time
			pid=$(pgrep -n -f "^$rust_bin run") || pid=
			[ -n "$pid" ] && kb=$(process_kb "$pid") && [ "$kb" -gt "$w" ] && w=$kb
		else
			for entry in ${pids//,/ }; do
				type=${entry%=*}
				pid=${entry#*=}
				kb=$(process_kb "$pid")
				if [ "$type" = worker ] && [ "$kb" -gt "$w" ]; then w=$kb; fi
				if [ "$type" = shipper ] && [ "$kb" -gt "$s" ]; then s=$kb; fi
			done
		fi
		[ "$outbox" -gt "$o" ] && o=$outbox
		[ "$wal" -gt "$r" ] && r=$wal
		echo "$w $s $o $r" >"$out.tmp" && mv "$out.tmp" "$out"
		sleep 1
	done
}

sampler=
cpu0=
cpu_t0=
sample_start() {
	rm -f "$BENCH_DIR/peaks"
	sample "$BENCH_DIR/peaks" "$1" &
	sampler=$!
	cpu0=$(cpu_now "$1")
	cpu_t0=$(clock)
}
# sample_stop: stop sampling, print the peaks (and keep the CPU shares
# since sample_start in $BENCH_DIR/cpu, for report)
sample_stop() {
	cpu_share "$system" "$cpu0" "$(cpu_now "$system")" "$(elapsed "$cpu_t0" "$(clock)")" >"$BENCH_DIR/cpu"
	kill "$sampler" 2>/dev/null || true
	wait "$sampler" 2>/dev/null || true
	awk '{ printf "%d %d %d %d", $1 / 1024, $2 / 1024, $3 / 1048576, $4 / 1048576 }' \
		"$BENCH_DIR/peaks" 2>/dev/null || echo "0 0 0 0"
}

# report SYSTEM STEP SIZE SECONDS DOCUMENTS PEAKS: print a step's line, and keep its figures
declare -A r
report() {
	local system=$1 step=$2 size=$3 seconds=$4 docs=$5 w s o wal
	read -r w s o wal <<<"$6"
	r[$system.$step.$size]=$(awk -v t="$seconds" -v n="$docs" 'BEGIN { printf "%.2f", t / (n / 1e6) }')
	printf '  %-6s %5.1f s, %6s s per million documents; peaks: %s %s MB%s, outbox %s MB, WAL retained %s MB\n' \
		"$step" "$seconds" "${r[$system.$step.$size]}" "$([ "$system" = rust ] && echo daemon || echo worker)" "$w" \
		"$([ "$system" = rust ] && echo "" || echo ", shipper $s MB")" "$o" "$wal"
	[ -s "$BENCH_DIR/cpu" ] && echo "         $(cat "$BENCH_DIR/cpu")"
	rm -f "$BENCH_DIR/cpu"
}

# fresh_db NAME SYSTEM: a new database with the tables (flusso: and the extension)
fresh_db() {
	export BENCH_DB=$1
	BENCH_DB=postgres bench_psql -c "CREATE DATABASE $BENCH_DB" >/dev/null
	if [ "$2" = flusso ]; then users_tables >/dev/null; else users_plain_tables >/dev/null; fi
}

# stop SYSTEM ALIAS: the system stopped (flusso: its index dropped)
stop() {
	if [ "$1" = flusso ]; then
		bench_psql -o /dev/null -c "SELECT flusso_drop_index('users')"
	else
		"${1}_stop" "$2" >/dev/null
	fi
}

# drop_db: drop $BENCH_DB, and the OpenSearch indexes named from ALIAS
drop_db() {
	curl -sf -XDELETE "$os/${1}*" >/dev/null || true
	BENCH_DB=postgres bench_psql -c "DROP DATABASE $BENCH_DB" >/dev/null
}

declare -A gave_up
for size in $sizes; do
	users=$(awk -v m="$size" 'BEGIN { print int(200000 * m) }')
	orders=$(awk -v m="$size" 'BEGIN { print int(1000000 * m) }')
	tag=${size//./_}
	echo "== ${size}x: $users users, $orders orders"
	for system in $systems; do
		[ -z "${gave_up[$system]:-}" ] || { echo "-- $system: skipped (${gave_up[$system]})"; continue; }
		echo "-- $system"

		# 1. seed
		fresh_db "${system}_seed_$tag" "$system"
		alias=${system}-s$tag-users
		t0=$(clock)
		users_load "$users" "$orders" >/dev/null
		bench_psql -c "VACUUM ANALYZE users, orders" >/dev/null
		echo "  (loaded in $(elapsed "$t0" "$(clock)") s)"
		sample_start "$system"
		t0=$(clock)
		"${system}_start" "$BENCH_DB" "$alias"
		if wait_for "$system seed at ${size}x" "${system}_seeded"; then
			report "$system" seed "$size" "$(elapsed "$t0" "$(clock)")" "$users" "$(sample_stop)"
		else
			sample_stop >/dev/null
			gave_up[$system]="its seed at ${size}x took longer than $timeout s"
		fi
		stop "$system" "$alias"
		drop_db "$alias"
		[ -z "${gave_up[$system]:-}" ] || continue

		# 2. bulk
		fresh_db "${system}_bulk_$tag" "$system"
		alias=${system}-b$tag-users
		bench_psql -c "INSERT INTO users VALUES (0, 'marker@example.com', 'marker 0')" >/dev/null
		"${system}_start" "$BENCH_DB" "$alias"
		wait_for "$system start" "${system}_seeded" || true
		marker "$alias"
		sample_start "$system"
		t0=$(clock)
		load2 "$users" "$orders" >/dev/null
		t1=$(clock)
		echo "  (loaded in $(elapsed "$t0" "$t1") s)"
		if caught_up "$alias"; then
			report "$system" bulk "$size" "$(elapsed "$t1" "$(clock)")" "$users" "$(sample_stop)"
		else
			sample_stop >/dev/null
			gave_up[$system]="its catch-up at ${size}x took longer than $timeout s"
		fi
		echo "  afterwards: $(differ "$alias") documents differ from a fresh build"
		stop "$system" "$alias"
		drop_db "$alias"
		[ -z "${gave_up[$system]:-}" ] || continue

		# 3. the table sink
		[ "$system" = flusso ] || continue
		fresh_db "flusso_table_$tag" flusso
		users_load "$users" "$orders" >/dev/null
		bench_psql -c "VACUUM ANALYZE users, orders" >/dev/null
		sample_start flusso
		t0=$(clock)
		users_index
		wait_until "SELECT phase = 'live' FROM flusso_status()"
		t1=$(clock)
		report flusso table "$size" "$(elapsed "$t0" "$t1")" "$users" "$(sample_stop)"
		reference=$(users_reference)
		r[reference.$size]=$(awk -v t="$reference" -v n="$users" 'BEGIN { printf "%.2f", t / (n / 1e6) }')
		echo "  reference CREATE TABLE AS SELECT $reference s (${r[reference.$size]} s per million);" \
			"table sink seed / reference: $(awk -v a="$(elapsed "$t0" "$t1")" -v b="$reference" 'BEGIN { printf "%.2f", a / b }');" \
			"documents equal to it: $(users_same) of $users"
		bench_psql -o /dev/null -c "SELECT flusso_drop_index('users')"
		drop_db flusso-t
	done
done

first=${sizes%% *}
last=${sizes##* }
echo "== summary: seconds per million documents, ${first}x and ${last}x, and their ratio (goal <= 1.1)"
for system in $systems reference; do
	for step in seed bulk table; do
		[ "$system" = reference ] && [ "$step" != table ] && continue
		key=$system.$step
		[ "$system" = reference ] && key=reference
		a=${r[$key.$first]:-}
		b=${r[$key.$last]:-}
		[ -n "$a$b" ] || continue
		printf '%-10s %-6s %8s %8s  %s\n' "$system" "$step" "${a:-?}" "${b:-?}" \
			"$(awk -v a="${a:-0}" -v b="${b:-0}" 'BEGIN { if (a == 0 || b == 0) print "?"; else printf "%.2f", b / a }')"
	done
done
for system in $systems; do
	[ -z "${gave_up[$system]:-}" ] || echo "$system: ${gave_up[$system]}"
done

# cluster.sh: sourced by the benchmarks.  Starts a throwaway cluster with
# test/flusso.conf in $BENCH_DIR (default /tmp/flusso-bench), listening on a
# Unix socket there, and stops it on exit unless BENCH_KEEP is set.
# bench_start's arguments are further settings.
# bench_psql runs SQL against it (in database $BENCH_DB, default postgres);
# scaled N prints N times BENCH_SCALE.

source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"

BENCH_DIR=${BENCH_DIR:-/tmp/flusso-bench}
BENCH_PORT=${BENCH_PORT:-5498}
BENCH_SCALE=${BENCH_SCALE:-1}

scaled() {
	awk "BEGIN { print int($1 * $BENCH_SCALE) }"
}

bench_psql() {
	as_cluster_user "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$BENCH_DIR" \
		-p "$BENCH_PORT" -U postgres -d "${BENCH_DB:-postgres}" "$@"
}

bench_stop() {
	if [ -f "$BENCH_DIR/data/postmaster.pid" ]; then
		as_cluster_user "$PG_BINDIR/pg_ctl" -D "$BENCH_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$BENCH_DIR"
}

bench_start() {
	bench_stop
	start_cluster "$BENCH_DIR" "$BENCH_PORT" "shared_buffers = 512MB" \
		"max_wal_size = 4GB" "synchronous_commit = off" "$@"
	[ -n "${BENCH_KEEP:-}" ] || trap bench_stop EXIT
}

# process_ticks BACKEND_TYPE...: "pid ticks" of each of the cluster's
# processes of those backend types (ticks: its CPU time so far)
process_ticks() {
	local types
	types=$(printf "'%s'," "$@")
	for pid in $(bench_psql -At -c "SELECT pid FROM pg_stat_activity WHERE backend_type IN (${types%,})"); do
		awk -v pid="$pid" '{ print pid, $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || true
	done
}

# cpu_since TICKS BACKEND_TYPE...: CPU seconds the processes of those
# types used since process_ticks printed TICKS (one started since counts
# whole; one that exited since, say a worker restarted, is not counted)
cpu_since() {
	local before=$1
	shift
	process_ticks "$@" | awk -v hz="$(getconf CLK_TCK)" -v before="$before" '
		BEGIN { n = split(before, f, /[ \n]/); for (i = 1; i < n; i += 2) start[f[i]] = f[i + 1] }
		{ s += $2 - ($1 in start ? start[$1] : 0) }
		END { printf "%.2f\n", s / hz }'
}

# cluster_cpu: CPU seconds used so far by the postmaster and its children,
# those running and those that exited (reaped: in the postmaster's cutime)
cluster_cpu() {
	local pm
	pm=$(head -1 "$BENCH_DIR/data/postmaster.pid")
	{
		awk '{ print $14 + $15 + $16 + $17 }' "/proc/$pm/stat"
		for child in $(pgrep -P "$pm"); do
			awk '{ print $14 + $15 }' "/proc/$child/stat" 2>/dev/null || true
		done
	} | awk -v hz="$(getconf CLK_TCK)" '{ s += $1 } END { printf "%.2f\n", s / hz }'
}

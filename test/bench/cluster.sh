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

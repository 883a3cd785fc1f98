#!/usr/bin/env bash
#
# unchanged.sh: what flusso writes for changes that change no document,
# against one that changes every document, with both sinks on (or the
# sinks BENCH_SINKS names: "search" for OpenSearch alone) and a real
# OpenSearch node (test/opensearch/).
#
# The users index of users.sh over 10k users and 50k orders (times
# BENCH_SCALE); users gets a column no index reads (note).  Three updates
# of every user: of note, of name to the value it had, of name to a new
# value; each first with the default replica identity, then with
# REPLICA IDENTITY FULL on users.  For each: the rows queued in the outbox
# (its sequence), the documents shipped (flusso_status().shipped), and the
# WAL flusso wrote (the WAL from the update's commit until the worker
# confirmed past it and the outbox was drained, less nothing else: the
# cluster is otherwise idle), in total and per document queued; the CPU
# seconds of flusso's worker and shipper and of the OpenSearch node over
# the same span; and, at the end, the bytes flusso keeps per document to
# know what OpenSearch holds (flusso.opensearch_digest).
#
# The node listens on 127.0.0.1:$BENCH_OPENSEARCH_PORT (default 9298).
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"
source "$(dirname "$0")/users.sh"

users=$(scaled 10000)
orders=$(scaled 50000)
os_port=${BENCH_OPENSEARCH_PORT:-9298}
os="http://127.0.0.1:$os_port"
node="$FLUSSO_ROOT/test/opensearch/node.sh"
sinks=${BENCH_SINKS:-table,search}
sinks_array="ARRAY['${sinks//,/\',\'}']"

bench_start
bash "$node" start "$BENCH_DIR/opensearch" "$os_port"
trap 'bash "$node" stop "$BENCH_DIR/opensearch"; bench_stop' EXIT
echo "unchanged.sh: $users users, $orders orders, sinks $sinks"

users_tables
users_load "$users" "$orders"
bench_psql -c "ALTER TABLE users ADD COLUMN note text"
users_index
bench_psql -c "CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$os', index_prefix 'bench-')" \
	-c "SELECT flusso_set_sinks('users', $sinks_array, '{\"replicas\": 0}')"

drained() {
	local lsn
	lsn=$(bench_psql -At -c "SELECT pg_current_wal_insert_lsn()")
	wait_until "SELECT (SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots
		WHERE slot_name LIKE 'flusso_%')
		AND (SELECT phase = 'live' AND ship_pending = 0 FROM flusso_status())
		AND NOT EXISTS (SELECT FROM flusso.opensearch_generation WHERE state <> 'served')"
}
drained

# node_ticks: the OpenSearch node's CPU so far, in clock ticks
node_ticks() {
	awk '{ print $14 + $15 }' "/proc/$(cat "$BENCH_DIR/opensearch/node.pid")/stat"
}

# measure LABEL SQL: run SQL, wait until flusso is done with it, print
measure() {
	local before after ticks node_before
	before=$(bench_psql -At -c "SELECT (SELECT last_value FROM flusso.outbox_seq), shipped,
		documents_written FROM flusso_status()")
	ticks=$(process_ticks 'flusso worker' 'flusso shipper')
	node_before=$(node_ticks)
	bench_psql -c "$2"
	local start
	start=$(bench_psql -At -c "SELECT pg_current_wal_insert_lsn()")
	drained
	after=$(bench_psql -At -c "SELECT (SELECT last_value FROM flusso.outbox_seq), shipped,
		documents_written, pg_current_wal_insert_lsn() - '$start' FROM flusso_status()")
	awk -v label="$1" -v b="$before" -v a="$after" -v cpu="$(cpu_since "$ticks" 'flusso worker' 'flusso shipper')" \
		-v node="$(( $(node_ticks) - node_before ))" -v hz="$(getconf CLK_TCK)" 'BEGIN {
		split(b, x, "|"); split(a, y, "|")
		q = y[1] - x[1]; s = y[2] - x[2]; w = y[3] - x[3]; wal = y[4]
		printf "%-40s queued %6d  shipped %6d  written %6d  flusso WAL %9d bytes", label, q, s, w, wal
		if (q > 0) printf " (%.0f per document queued)", wal / q
		printf "  CPU flusso %.2f s, OpenSearch %.2f s\n", cpu, node / hz
	}'
}

# The first documents written once a generation serves are all queued: the
# worker queues only what the table sink changed once it has read past the
# point where it first saw OpenSearch mirror the table sink (docs/opensearch.md, Syncing
# to OpenSearch).  One user's, so that what follows measures the steady state.
measure "warm-up: one user's name as it was" "UPDATE users SET name = name WHERE id = 1"

for identity in DEFAULT FULL; do
	bench_psql -c "ALTER TABLE users REPLICA IDENTITY $identity"
	measure "$identity: note (no index reads it)" "UPDATE users SET note = coalesce(note, '') || 'x'"
	measure "$identity: name set to the value it had" "UPDATE users SET name = name"
	measure "$identity: name changed" "UPDATE users SET name = name || '.'"
done

bench_psql -At -c "SELECT format('what OpenSearch holds, as flusso knows it: %s rows, %s bytes (%s a document)',
	count(*), pg_total_relation_size('flusso.opensearch_digest'),
	pg_total_relation_size('flusso.opensearch_digest') / greatest(count(*), 1))
	FROM flusso.opensearch_digest"

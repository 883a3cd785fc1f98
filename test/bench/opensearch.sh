#!/usr/bin/env bash
#
# opensearch.sh: the OpenSearch sink against a real node (test/opensearch/).
#
# 1. Seed: 200k users and 1M orders (times BENCH_SCALE, default 1) exist;
#    the users index is given an OpenSearch sink alone, and the time until
#    its alias serves every document (nothing queued, the generation
#    served) is measured.  The reference, in the same run: the same
#    documents (one CREATE TABLE AS SELECT, not timed), prepared as NDJSON
#    in bulks of the same size with the same versions, sent by curl with
#    as many bulks in flight as flusso has (BENCH_BULKS_IN_FLIGHT, default
#    2, the server's bulks_in_flight) into an index created with the same
#    body, then refreshed.  Goal: seed <= 1.2 x the reference.
# 2. Live: in a second database, the index with both sinks on empty
#    tables, then the same load as live.sh; the time until the worker has
#    confirmed past the load, and until the outbox is drained.
#
# The node listens on 127.0.0.1:$BENCH_OPENSEARCH_PORT (default 9298);
# BENCH_LIVE=0 runs the seed alone.
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"
source "$(dirname "$0")/users.sh"

users=$(scaled 200000)
orders=$(scaled 1000000)
os_port=${BENCH_OPENSEARCH_PORT:-9298}
os="http://127.0.0.1:$os_port"
node="$FLUSSO_ROOT/test/opensearch/node.sh"
bulk=1000
in_flight=${BENCH_BULKS_IN_FLIGHT:-2}

bench_start
bash "$node" start "$BENCH_DIR/opensearch" "$os_port"
trap 'bash "$node" stop "$BENCH_DIR/opensearch"; bench_stop' EXIT
echo "opensearch.sh: $users users, $orders orders; bulks of $bulk documents, $in_flight in flight"

users_tables
users_load "$users" "$orders"
bench_psql -c "VACUUM ANALYZE users, orders"
users_index
wait_until "SELECT phase = 'live' FROM flusso_status()"
bench_psql -c "CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$os', index_prefix 'bench-', bulk_max_documents '$bulk',
		bulks_in_flight '$in_flight')"

# the reference: the same documents as NDJSON, bulks of $bulk, sent by curl,
# $in_flight at a time
users_reference >/dev/null
body=$(bench_psql -At -c "SELECT jsonb_set(flusso_mapping('users'), '{settings,index}',
	'{\"number_of_shards\": 1, \"number_of_replicas\": 0, \"refresh_interval\": \"-1\"}')")
curl -sf -XPUT "$os/reference" -H 'Content-Type: application/json' -d "$body" >/dev/null
mkdir -p "$BENCH_DIR/ndjson"
chmod a+rwx "$BENCH_DIR/ndjson"
bench_psql -At -c "SELECT line FROM (
	SELECT id, 1 AS k, json_build_object('index', json_build_object('_index', 'reference', '_id', id,
		'version', 1, 'version_type', 'external_gte'))::text AS line FROM reference
	UNION ALL SELECT id, 2, doc::text FROM reference) s ORDER BY id, k" >"$BENCH_DIR/ndjson/all"
(cd "$BENCH_DIR/ndjson" && split -l $((2 * bulk)) -d -a 5 all part.)
reference_start=$(date +%s.%N)
send_part() {
	curl -sf -XPOST "$os/_bulk" -H 'Content-Type: application/x-ndjson' --data-binary "@$1" \
		| grep -q '"errors":false'
}
export -f send_part
export os
printf '%s\n' "$BENCH_DIR"/ndjson/part.* | xargs -P "$in_flight" -n 1 bash -c 'send_part "$0"'
curl -sf -XPOST "$os/reference/_refresh" >/dev/null
reference_end=$(date +%s.%N)
reference_count=$(curl -sf "$os/reference/_count" | sed 's/.*"count":\([0-9]*\).*/\1/')

# flusso: the OpenSearch sink alone, seeded
worker_ticks=$(process_ticks 'flusso worker')
shipper_ticks=$(process_ticks 'flusso shipper')
cluster_cpu_before=$(cluster_cpu)
start=$(now)
bench_psql -c "SELECT flusso_set_sinks('users', ARRAY['search'], '{\"replicas\": 0}')"
wait_until "SELECT (SELECT phase = 'live' AND ship_pending = 0 FROM flusso_status())
	AND EXISTS (SELECT FROM flusso.opensearch_generation WHERE state = 'served')
	AND NOT EXISTS (SELECT FROM flusso.opensearch_generation WHERE state <> 'served')"
seeded=$(now)
worker_cpu=$(cpu_since "$worker_ticks" 'flusso worker')
shipper_cpu=$(cpu_since "$shipper_ticks" 'flusso shipper')
cluster_cpu=$(awk -v a="$cluster_cpu_before" -v b="$(cluster_cpu)" 'BEGIN { print b - a }')
count=$(curl -sf "$os/bench-users/_count" | sed 's/.*"count":\([0-9]*\).*/\1/')
problems=$(bench_psql -At -c "SELECT count(*) FROM flusso_verify('users')")

awk -v s="$start" -v e="$seeded" -v rs="$reference_start" -v re="$reference_end" \
	-v c="$count" -v rc="$reference_count" -v p="$problems" -v wc="$worker_cpu" -v sc="$shipper_cpu" -v cc="$cluster_cpu" 'BEGIN {
	printf "seed into OpenSearch %.2f s (%d documents); reference curl of prepared NDJSON %.2f s (%d documents)\n", e - s, c, re - rs, rc
	printf "CPU during the seed: worker %.1f s and shipper %.1f s (%.1f ms per 1,000 documents), the whole cluster %.1f s\n", wc, sc, (wc + sc) * 1e6 / c, cc
	printf "flusso_verify: %d documents differ from a fresh build\n", p
	printf "ratio (seed / reference): %.2f (goal <= 1.2)\n", (e - s) / (re - rs)
}'

[ "${BENCH_LIVE:-1}" = 1 ] || exit 0

# 2. live: both sinks, the load of live.sh through the live path, in a
# second database (the users.sh functions run there with BENCH_DB=live)
bench_psql -c "CREATE DATABASE live"
live_psql() { BENCH_DB=live bench_psql "$@"; }
BENCH_DB=live users_tables
live_psql -c "CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url '$os', index_prefix 'live-', bulk_max_documents '$bulk',
		bulks_in_flight '$in_flight')"
BENCH_DB=live users_index
live_psql -o /dev/null -c "SELECT flusso_set_sinks('users', ARRAY['table', 'search'], '{\"replicas\": 0}')"
until [ "$(live_psql -At -c "SELECT (SELECT phase = 'live' AND ship_pending = 0 FROM flusso_status())
	AND EXISTS (SELECT FROM flusso.opensearch_generation WHERE state = 'served')")" = t ]; do sleep 0.1; done

live_start=$(date +%s.%N)
BENCH_DB=live users_load "$users" "$orders"
loaded=$(date +%s.%N)
lsn=$(live_psql -At -c "SELECT pg_current_wal_insert_lsn()")
until [ "$(live_psql -At -c "SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE database = current_database() AND plugin = 'flusso'")" = t ]; do sleep 0.1; done
confirmed=$(date +%s.%N)
peak=$(live_psql -At -c "SELECT ship_pending FROM flusso_status()")
until [ "$(live_psql -At -c "SELECT ship_pending = 0 FROM flusso_status()")" = t ]; do sleep 0.1; done
drained=$(date +%s.%N)
live_count=$(curl -sf -XPOST "$os/live-users/_refresh" >/dev/null; curl -sf "$os/live-users/_count" | sed 's/.*"count":\([0-9]*\).*/\1/')
live_problems=$(live_psql -At -c "SELECT count(*) FROM flusso_verify('users')")

awk -v s="$live_start" -v l="$loaded" -v c="$confirmed" -v d="$drained" -v p="$peak" \
	-v n="$live_count" -v bad="$live_problems" 'BEGIN {
	printf "live, both sinks: load %.1f s; slot confirmed %.1f s after the load ended (%d documents queued then); outbox drained %.1f s after the load ended\n", l - s, c - l, p, d - l
	printf "OpenSearch holds %d documents; flusso_verify: %d differ (table and OpenSearch)\n", n, bad
}'

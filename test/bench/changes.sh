#!/usr/bin/env bash
#
# changes.sh: what changing an index costs, against the full re-seed every
# change took before, in one run on a real node (test/opensearch/node.sh,
# the line FLUSSO_OPENSEARCH_LINE names, on BENCH_OPENSEARCH_PORT, default
# 9298).
#
# 200k users and 1M orders (times BENCH_SCALE, default 1) exist; the users
# index ships to OpenSearch alone, seeded, served.
#  1. The reference: flusso_resnapshot('users'), a full re-seed into a new
#     generation; the time from its commit until that generation serves
#     every document (nothing queued, the old one retired).
#  2. Live settings: flusso_set_sinks() with other replicas (0 to 1) and
#     refresh_interval (1s to 5s); the time from its commit until the
#     served index has both, while a client counts the alias every 10 ms
#     (a count other than the users', or a failure, is printed), and
#     whether a generation was begun or a seed logged.
#  3. Partial re-snapshots: flusso_resnapshot('users', predicate => ...)
#     for 1%, 10% and all of the users, and by 1,000 ids; the time from
#     its call until flusso_wait(), in the same session, says OpenSearch
#     holds every document it rebuilt, the documents rebuilt
#     (flusso_status().documents_written), and the generations and seeds
#     since.
#  4. Fields added in place: the definition replaced by one with a field
#     more at the top and one more in each order; the time from its call
#     until flusso_wait(), in the same session, returns, the documents of
#     the alias that hold the new field then, while a client counts the
#     alias every 10 ms, and the generations and seeds since.
#  5. Two more indexes of the users (table sink alone) seeded again with
#     flusso.max_seeds = 1, then 2: the time until both are seeded.
# The ratio printed is each change's time over the reference's.  Not part
# of make test.
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"
source "$(dirname "$0")/users.sh"

users=$(scaled 200000)
orders=$(scaled 1000000)
os_port=${BENCH_OPENSEARCH_PORT:-9298}
os="http://127.0.0.1:$os_port"
node="$FLUSSO_ROOT/test/opensearch/node.sh"

bench_start
bash "$node" build >/dev/null
bash "$node" start "$BENCH_DIR/opensearch" "$os_port" >/dev/null
trap 'bash "$node" stop "$BENCH_DIR/opensearch" >/dev/null; bench_stop' EXIT
echo "changes.sh: $users users, $orders orders, OpenSearch sink alone (${FLUSSO_OPENSEARCH_LINE:-2} line)"

users_tables >/dev/null
users_load "$users" "$orders" >/dev/null
bench_psql -c "VACUUM ANALYZE users, orders" >/dev/null
users_search_index "$os" bench- '{"replicas": 0, "refresh_interval": "1s"}'
served="SELECT (SELECT phase = 'live' AND ship_pending = 0 FROM flusso_status())
	AND EXISTS (SELECT FROM flusso.opensearch_generation WHERE state = 'served')
	AND NOT EXISTS (SELECT FROM flusso.opensearch_generation WHERE state <> 'served')"
wait_until "$served"
concrete() { bench_psql -At -c "SELECT string_agg(concrete, ' ') FROM flusso.opensearch_generation"; }
seeds() { grep -c 'flusso: seeding index "users"' "$BENCH_DIR/server.log" || true; }
echo "seeded: $(curl -sf "$os/bench-users/_count" | sed 's/.*"count":\([0-9]*\).*/\1/') documents in $(concrete)"

# 1. the reference: a full re-seed into a new generation
before=$(concrete)
start=$(now)
bench_psql -o /dev/null -c "SELECT flusso_resnapshot('users')"
until [ "$(concrete)" != "$before" ]; do sleep 0.05; done
wait_until "$served"
reseed=$(awk -v s="$start" -v e="$(now)" 'BEGIN { printf "%.2f", e - s }')
echo "full re-seed: $reseed s, into $(concrete)"

# 2. live settings, while a client counts the alias every 10 ms
generation=$(concrete)
seeds_before=$(seeds)
settings() {
	curl -sf "$os/$generation/_settings" | python3 -c 'import json, sys
s = json.load(sys.stdin)
i = next(iter(s.values()))["settings"]["index"]
print(i["number_of_replicas"], i.get("refresh_interval", "unset"))'
}
counts="$BENCH_DIR/counts"
# count_alias SECONDS: in the background, count the alias every 10 ms for
# that long, then write "polls bad" (a count other than the users', or a
# failure, is bad) into $counts; $counter is its pid
count_alias() {
	python3 - "$os/bench-users/_count" "$users" "$1" >"$counts" <<'PY' &
import json, sys, time, urllib.request
url, expected, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
polls = bad = 0
end = time.time() + seconds
while time.time() < end:
    polls += 1
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            if json.load(r)["count"] != expected:
                bad += 1
    except Exception:
        bad += 1
    time.sleep(0.01)
print(polls, bad)
PY
	counter=$!
}
count_alias 30
sleep 1
start=$(now)
bench_psql -o /dev/null -c "SELECT flusso_set_sinks('users', ARRAY['search'], '{\"replicas\": 1, \"refresh_interval\": \"5s\"}')"
until [ "$(settings)" = "1 5s" ]; do sleep 0.01; done
live=$(awk -v s="$start" -v e="$(now)" 'BEGIN { printf "%.2f", e - s }')
wait "$counter"
read -r polls bad <"$counts"
echo "live settings: $live s until the served index had them; generations now: $(concrete)" \
	"(before: $generation); seeds logged since: $(($(seeds) - seeds_before));" \
	"alias counted $polls times over 30 s, $bad failed or differed"
awk -v l="$live" -v r="$reseed" 'BEGIN { printf "ratio (live settings / full re-seed): %.3f\n", l / r }'

# 3. partial re-snapshots, in place: by predicate, then by ids
generation=$(concrete)
seeds_before=$(seeds)
partial() {
	local what=$1 call=$2 rows=$3 written start took
	written=$(bench_psql -At -c "SELECT sum(documents_written) FROM flusso_status()")
	start=$(now)
	# one session: flusso_wait() waits for its own last commit, flushed or not
	[ "$(bench_psql -At -c "$call" -c "SELECT flusso_wait('users', '10min')" | tail -1)" = t ] ||
		{ echo "flusso_wait() timed out"; exit 1; }
	took=$(awk -v s="$start" -v e="$(now)" 'BEGIN { printf "%.2f", e - s }')
	written=$(($(bench_psql -At -c "SELECT sum(documents_written) FROM flusso_status()") - written))
	echo "partial re-snapshot, $what ($rows users): $took s, $written documents rebuilt and queued;" \
		"ratio (partial / full re-seed): $(awk -v l="$took" -v r="$reseed" 'BEGIN { printf "%.3f", l / r }')"
}
for predicate in 'id % 100 = 0' 'id % 10 = 0' 'true'; do
	rows=$(bench_psql -At -c "SELECT count(*) FROM users WHERE $predicate")
	partial "predicate $predicate" "SELECT flusso_resnapshot('users', predicate => \$\$$predicate\$\$)" "$rows"
done
partial "1,000 ids" "SELECT flusso_resnapshot('users', ids => ARRAY(SELECT id::text FROM users ORDER BY id LIMIT 1000))" 1000
echo "partial re-snapshots: generations now: $(concrete) (before: $generation); seeds logged since: $(($(seeds) - seeds_before))"

# 4. fields added in place, while a client counts the alias every 10 ms
generation=$(concrete)
seeds_before=$(seeds)
count_alias 20
sleep 1
added=$(users_definition | sed 's/^fields:$/fields:\n  - keyword: displayName\n    column: name\n    required: true/; s/^      - keyword: status$/      - timestamp: createdAt\n        column: created_at\n        required: true\n      - keyword: status/')
start=$(now)
waited=$(bench_psql -At -v definition="$added" <<'SQL' | tail -1
SELECT flusso_create_index('users', :'definition', replace => true);
SELECT flusso_wait('users', '10min');
SQL
)
[ "$waited" = t ] || { echo "flusso_wait() did not return true: $waited"; exit 1; }
took=$(awk -v s="$start" -v e="$(now)" 'BEGIN { printf "%.2f", e - s }')
curl -sf -XPOST "$os/bench-users/_refresh" >/dev/null
holding=$(curl -sf -XPOST -H 'Content-Type: application/json' "$os/bench-users/_count" \
	-d '{"query": {"exists": {"field": "displayName"}}}' | sed 's/.*"count":\([0-9]*\).*/\1/')
wait "$counter"
read -r polls bad <"$counts"
echo "fields added in place: $took s until flusso_wait() returned, $holding of $users documents hold the new field;" \
	"generations now: $(concrete) (before: $generation); seeds logged since: $(($(seeds) - seeds_before));" \
	"alias counted $polls times over 20 s, $bad failed or differed"
awk -v l="$took" -v r="$reseed" 'BEGIN { printf "ratio (fields added in place / full re-seed): %.3f\n", l / r }'

# 5. two indexes seeded one after the other, then side by side
bench_psql -o /dev/null -v definition="$(users_definition)" <<'SQL'
SELECT flusso_create_index('seed_a', :'definition');
SELECT flusso_create_index('seed_b', :'definition');
SQL
both_seeded="SELECT count(*) = 2 FROM flusso.index WHERE name IN ('seed_a', 'seed_b') AND NOT needs_seed"
wait_until "$both_seeded"
for max in 1 2; do
	bench_psql -o /dev/null -c "ALTER SYSTEM SET flusso.max_seeds = $max" -c "SELECT pg_reload_conf()"
	sleep 1
	start=$(now)
	bench_psql -o /dev/null -c "SELECT flusso_resnapshot('seed_a'), flusso_resnapshot('seed_b')"
	sleep 0.5
	wait_until "$both_seeded"
	took=$(awk -v s="$start" -v e="$(now)" 'BEGIN { printf "%.2f", e - s }')
	echo "two indexes of $users users seeded again with flusso.max_seeds = $max: $took s"
done

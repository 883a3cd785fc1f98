#!/usr/bin/env bash
#
# decode.sh: decoding time of flusso's output plugin against pgoutput over
# the same WAL, both read through SQL peeks.  The workload is 500k updates
# on one published table and 100k on another (times BENCH_SCALE, default 1),
# in transactions of 10k rows, written after both slots exist.  Each plugin
# decodes the whole WAL once untimed, then BENCH_ROUNDS times (default 5),
# alternating; the median times and their ratio are printed.  Goal: flusso <= 0.7 x pgoutput.
#
set -euo pipefail
source "$(dirname "$0")/cluster.sh"

rounds=${BENCH_ROUNDS:-5}
rows_a=$(scaled 500000)
rows_b=$(scaled 100000)

bench_start
echo "decode.sh: $rows_a updates on bench_a, $rows_b on bench_b, $rounds rounds"

bench_psql <<SQL
CREATE EXTENSION flusso;
CREATE TABLE bench_a (id int PRIMARY KEY, v int NOT NULL, payload text NOT NULL);
CREATE TABLE bench_b (id int PRIMARY KEY, ref int NOT NULL, note text NOT NULL);
INSERT INTO bench_a SELECT i, 0, md5(i::text) FROM generate_series(1, $rows_a) i;
INSERT INTO bench_b SELECT i, i % 100, md5(i::text) FROM generate_series(1, $rows_b) i;
CREATE PUBLICATION flusso FOR TABLE bench_a, bench_b;
SELECT 'slot' FROM pg_create_logical_replication_slot('bench_flusso', 'flusso');
SELECT 'slot' FROM pg_create_logical_replication_slot('bench_pgoutput', 'pgoutput');
CREATE PROCEDURE bench_update(tab text, total int) LANGUAGE plpgsql AS \$\$
BEGIN
	FOR lo IN 1..total BY 10000 LOOP
		EXECUTE format('UPDATE %I SET %I = %I + 1 WHERE id BETWEEN \$1 AND \$2',
					   tab, CASE tab WHEN 'bench_a' THEN 'v' ELSE 'ref' END,
					   CASE tab WHEN 'bench_a' THEN 'v' ELSE 'ref' END)
			USING lo, lo + 9999;
		COMMIT;
	END LOOP;
END
\$\$;
CALL bench_update('bench_a', $rows_a);
CALL bench_update('bench_b', $rows_b);
-- the updates commit asynchronously: flush them before anything decodes
CHECKPOINT;
CREATE FUNCTION bench_decode(slot text, VARIADIC options text[], OUT ms float8, OUT changes bigint)
LANGUAGE plpgsql AS \$\$
DECLARE
	t0 timestamptz := clock_timestamp();
BEGIN
	SELECT count(*) INTO changes
	FROM pg_logical_slot_peek_binary_changes(slot, NULL, NULL, VARIADIC options);
	ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END
\$\$;
SQL

# one untimed pass each, so that neither pays alone for reading the WAL cold
bench_psql -At -c "SELECT 1 FROM bench_decode('bench_flusso', 'publication', 'flusso')" \
	-c "SELECT 1 FROM bench_decode('bench_pgoutput', 'proto_version', '1', 'publication_names', 'flusso')" >/dev/null

flusso_times=()
pgoutput_times=()
for ((r = 1; r <= rounds; r++)); do
	f=$(bench_psql -At -c "SELECT ms || ' ' || changes FROM bench_decode('bench_flusso', 'publication', 'flusso')")
	p=$(bench_psql -At -c "SELECT ms || ' ' || changes FROM bench_decode('bench_pgoutput', 'proto_version', '1', 'publication_names', 'flusso')")
	echo "round $r: flusso ${f% *} ms (${f#* } records), pgoutput ${p% *} ms (${p#* } records)"
	flusso_times+=("${f% *}")
	pgoutput_times+=("${p% *}")
done

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
fm=$(median "${flusso_times[@]}")
pm=$(median "${pgoutput_times[@]}")
awk -v f="$fm" -v p="$pm" 'BEGIN {
	printf "median decode time: flusso %.0f ms, pgoutput %.0f ms, ratio %.2f (goal <= 0.70)\n", f, p, f / p
}'

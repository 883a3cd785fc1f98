#!/usr/bin/env bash
#
# demo.sh start [opensearch] | stop: a throwaway PostgreSQL cluster with
# flusso preloaded, the library sample loaded and its indexes defined.  The
# cluster lives in $FLUSSO_DEMO_DIR (default /tmp/flusso-demo), listens only
# on a Unix socket there, on port $FLUSSO_DEMO_PORT (default 5499), and runs
# as an unprivileged OS user.  With "opensearch", a real OpenSearch node
# (test/opensearch/) starts too, on 127.0.0.1:$FLUSSO_DEMO_OPENSEARCH_PORT
# (default 9299), and the books index ships to it.
#
set -euo pipefail
source "$(dirname "$0")/common.sh"

dir=${FLUSSO_DEMO_DIR:-/tmp/flusso-demo}
port=${FLUSSO_DEMO_PORT:-5499}
os_port=${FLUSSO_DEMO_OPENSEARCH_PORT:-9299}
data="$dir/data"
node="$FLUSSO_ROOT/test/opensearch/node.sh"

psql_demo() {
	as_cluster_user "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" "$@"
}

stop() {
	[ -d "$dir/opensearch" ] && bash "$node" stop "$dir/opensearch"
	if [ -f "$data/postmaster.pid" ]; then
		as_cluster_user "$PG_BINDIR/pg_ctl" -D "$data" -m fast -w stop
	fi
	rm -rf "$dir"
	echo "demo cluster stopped and removed"
}

# The books index shipped to a real OpenSearch node as well.
opensearch() {
	echo "== OpenSearch: a real node, a server for it, books shipped there too"
	bash "$node" start "$dir/opensearch" "$os_port"
	psql_demo -U postgres -d library <<SQL
CREATE SERVER search FOREIGN DATA WRAPPER flusso_opensearch
	OPTIONS (url 'http://127.0.0.1:$os_port', index_prefix 'demo-');
SELECT flusso_set_sinks('books', ARRAY['table', 'search'], '{"replicas": 0}');
SQL
	wait_shipped
	psql_demo -U postgres -d library <<SQL
\echo '-- flusso_status(): the books are seeded into OpenSearch'
SELECT index, phase, ship_pending, shipped, rejected FROM flusso_status();
\echo '-- the generation behind the alias:'
SELECT generation, concrete, alias, state FROM flusso.opensearch_generation;
SQL
	echo "-- curl 'http://127.0.0.1:$os_port/demo-books/_search?q=title:sistema&_source=title,authors.name'"
	curl -s "http://127.0.0.1:$os_port/demo-books/_search?q=title:sistema&_source=title,authors.name"
	echo
	echo "== a live change, then the same search"
	psql_demo -U postgres -d library -c "UPDATE books SET title = 'Il sistema periodico (new edition)' WHERE id = 2"
	wait_shipped
	curl -s "http://127.0.0.1:$os_port/demo-books/_refresh" >/dev/null
	curl -s "http://127.0.0.1:$os_port/demo-books/_search?q=title:sistema&_source=title,authors.name"
	echo
	psql_demo -U postgres -d library -c "SELECT id, problem, sink FROM flusso_verify('books')"
}

# Until the worker has applied every change so far, nothing is queued for
# OpenSearch, and a generation is served.
wait_shipped() {
	local lsn
	lsn=$(psql_demo -U postgres -d library -At -c "SELECT pg_current_wal_insert_lsn()")
	for _ in $(seq 1 150); do
		done_=$(psql_demo -U postgres -d library -At -c "SELECT (SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name LIKE 'flusso_%')
			AND (SELECT ship_pending = 0 FROM flusso_status() WHERE index = 'books')
			AND EXISTS (SELECT FROM flusso.opensearch_generation WHERE state = 'served')
			AND NOT EXISTS (SELECT FROM flusso.opensearch_generation WHERE state <> 'served')")
		[ "$done_" = t ] && return
		sleep 0.2
	done
}

start() {
	if [ -f "$data/postmaster.pid" ]; then
		echo "A demo cluster is already running in $dir; 'make demo-stop' removes it."
		exit 1
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$FLUSSO_ROOT"/test/fixtures/* "$dir/"
	chmod a+r "$dir"/*
	echo "== creating a cluster in $data"
	start_cluster "$dir" "$port" "flusso.capture_log = on"

	echo "== loading the library sample (test/fixtures)"
	psql_demo -U postgres -d postgres -c 'CREATE DATABASE library'
	psql_demo -U postgres -d library -f "$dir/schema.sql" -f "$dir/seed.sql"
	psql_demo -U postgres -d library -c 'CREATE EXTENSION flusso'

	echo "== defining the books index (YAML) and the authors index (JSON)"
	psql_demo -U postgres -d library <<SQL
\set books \`cat $dir/books.schema.yml\`
\set authors \`cat $dir/authors.schema.json\`
SELECT flusso_create_index('books', :'books');
SELECT flusso_create_index('authors', :'authors');
\echo
\echo '-- SELECT name, version, schema_name, table_name FROM flusso_indexes;'
SELECT name, version, schema_name, table_name FROM flusso_indexes ORDER BY name;
\echo '-- the OpenSearch mapping derived for books, field by field:'
SELECT key AS field, value ->> 'type' AS type,
       coalesce(value ->> 'analyzer', '') AS analyzer,
       coalesce((SELECT string_agg(k, ', ' ORDER BY k)
                 FROM jsonb_object_keys(value -> 'fields') k), '') AS subfields
FROM jsonb_each(flusso_mapping('books') -> 'mappings' -> 'properties')
ORDER BY key;
\echo '-- a definition with a typo is refused and changes nothing:'
\set ON_ERROR_STOP 0
SELECT flusso_create_index('typo', 'version: 1
table: books
fields:
  - has_many: reviews
    table: reviews
    primary_key: id
    foriegn_key: book_id
    fields: []');
SQL

	echo "== provisioning: replica identities and the publication"
	psql_demo -U postgres -d library -c 'SELECT action, applied, blocker FROM flusso_provision()'

	echo "== seeding: the worker builds every document from the rows that exist"
	for _ in $(seq 1 150); do
		live=$(psql_demo -U postgres -d library -At -c "SELECT bool_and(phase = 'live') FROM flusso_status()")
		[ "$live" = t ] && break
		sleep 0.2
	done
	psql_demo -U postgres -d library <<SQL
SELECT index, phase, snapshot_done, snapshot_total, worker_pid IS NOT NULL AS worker, slot FROM flusso_status();
SELECT id, doc->>'title' AS title, doc->>'reviewCount' AS reviews FROM flusso_docs.books ORDER BY id;
SQL
	echo "== live changes: a review moves to another book, a loan ends, a book arrives"
	psql_demo -U postgres -d library <<SQL
UPDATE reviews SET book_id = 3 WHERE id = 2;
DELETE FROM loans WHERE id = 3;
INSERT INTO books (id, isbn, title, language) VALUES (5, '978-0-00-000005-0', 'If on a winter''s night a traveler', 'en');
INSERT INTO book_authors VALUES (5, 1, 1);
SQL
	for _ in $(seq 1 100); do
		n=$(psql_demo -U postgres -d library -At -c "SELECT count(*) FROM flusso_docs.books WHERE id = '5'")
		[ "$n" -ge 1 ] && break
		sleep 0.2
	done
	psql_demo -U postgres -d library <<SQL
\echo '-- what the worker captured (flusso.capture_log), old and new keys:'
SELECT relid::regclass AS "table", op, old_key, new_key FROM flusso.capture_log ORDER BY commit_lsn, id;
\echo '-- the documents of flusso_docs.books (rebuilt: by those changes, after the seed):'
SELECT id, doc->>'title' AS title, doc->>'reviewCount' AS reviews,
       doc->'currentLoan' AS loan, doc->'authors' AS authors,
       updated_at >= (SELECT min(captured_at) FROM flusso.capture_log) AS rebuilt
FROM flusso_docs.books ORDER BY id;
\echo '-- one of them in full:'
SELECT jsonb_pretty(doc) FROM flusso_docs.books WHERE id = '5';
\echo '-- flusso_status() after the changes:'
SELECT index, phase, changes_captured, documents_written, batches FROM flusso_status();
SQL

	[ "${1:-}" = opensearch ] && opensearch

	cat <<EOF2

The demo cluster is running.
  connect:  psql -h $dir -p $port -U postgres library$( [ "$(id -u)" -eq 0 ] && echo "   (as root: runuser -u postgres -- psql ...)")
  log:      $dir/server.log
  stop:     make demo-stop

Every document was seeded from the rows that existed, and follows every
change since: try an UPDATE, or SELECT flusso_resnapshot('books').
EOF2
	[ "${1:-}" = opensearch ] && cat <<EOF3
OpenSearch:  curl 'http://127.0.0.1:$os_port/demo-books/_search?q=calvino'  (the alias demo-books)
EOF3
	return 0
}

case "${1:-start}" in
	start) start "${2:-}" ;;
	stop) stop ;;
	*) echo "usage: $0 start [opensearch] | stop" >&2; exit 2 ;;
esac

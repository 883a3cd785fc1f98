#!/usr/bin/env bash
#
# layout.sh: the dependencies allowed between the folders of src/, checked
# on the #include lines (the tests run it first):
#
#   - no cycle between folders;
#   - src/schema/ includes nothing else of the tree (it builds as frontend
#     code too, for the fuzzer);
#   - cdc/ and document/ never include each other, and only engine/ sees
#     both a change batch (cdc/) and a build statement (document/);
#   - the output plugin runs in user backends too (through
#     pg_logical_slot_get_changes): its files, cdc/plugin.c with the
#     headers of ours it reaches and their .c files, include no header
#     of ours outside cdc/ but compat.h: nothing of the worker's (worker/,
#     ipc/, util/xact.h), of the catalog's (store/) or of the engine's;
#   - engine/engine.h (what every caller of the engine sees) and
#     engine/seed.h (the worker's seed) reach nothing of cdc/, document/
#     or sink/; engine/engine_index.h (the engine's structs) is seen by
#     engine/ alone;
#   - signal kinds are defined in store/catalog_signal.h alone, and rows
#     of flusso.signal are inserted there only: requests through
#     catalog_request() and catalog_request_seeds(), a seed's watermarks
#     (engine/seed.c) through catalog_insert_watermark();
#   - these folder rules hold for every header a file reaches, directly
#     or through other headers;
#   - sink/ knows documents, not change records (cdc/);
#   - check/ (the checks of flusso_check and flusso_provision, and their
#     wording) is included by api/ alone: engine/, design/, hooks/ and the
#     binding itself reach a definition bound to the live catalog through
#     binding/, which check/ may include;
#   - store/'s files run their statements through util/spi_run.c: no
#     file of store/ connects to SPI itself;
#   - no bare memory context switch outside the helpers that begin or end
#     transactions (util/xact.c, util/attempt.c): elsewhere a
#     MemoryContextSwitchTo() keeps the context it replaces (old = ...),
#     restores one that such a call kept, or makes a loop's per-turn
#     context (named *turn_context, or the shipper's pass_context) current
#     right after resetting it.  Ownership is explicit: nobody
#     switches "back" by hand to a context a transaction's end left behind;
#   - no folder of ours is named like one of PostgreSQL's include
#     directories (with -I src it would shadow the server's headers), and
#     every file's basename is unique in the tree;
#   - flusso's own tables have one owner, store/: every table the SQL
#     scripts create has its file there (store/catalog_<table>.c), and
#     neither a table with its file there nor a sequence of flusso's is
#     named in SQL text anywhere else.  SQL text is what a statement's
#     string literals spell, joined: a table after FROM, INTO, UPDATE,
#     JOIN, USING, TABLE or ONLY, or quoted ('flusso.<name>'), or
#     FLUSSO_SCHEMA ".<name>".
#
set -uo pipefail
src=${1:-$(dirname "$0")/../src}
status=0

fail() {
	echo "layout: $*"
	status=1
}

# "file header" for every #include of one of the tree's headers
includes=$(cd "$src" && for f in *.[ch] */*.[ch]; do
	grep -ho '^#include "[^"]*"' "$f" | sed 's/#include "//; s/"$//' | while read -r inc; do
		[ -f "$inc" ] && echo "$f $inc"
	done
done)

# "from to file header": every header of another folder a file includes,
# directly or through other headers (the rules below hold for both: a
# header that includes another gives its includers that one too)
edges=$(echo "$includes" | awk '
	NF { direct[$1] = direct[$1] " " $2; files[$1] }
	function folder(path) { return index(path, "/") ? substr(path, 1, index(path, "/") - 1) : "top" }
	END {
		for (f in files) {
			split("", seen); n = split(direct[f], todo, " ")
			while (n > 0) {
				h = todo[n--]
				if (h in seen) continue
				seen[h] = 1
				m = split(direct[h], more, " ")
				for (i = 1; i <= m; i++) todo[++n] = more[i]
			}
			from = folder(f)
			for (h in seen) {
				to = folder(h)
				if (from == "top")
					continue
				if (to == "top" && h !~ /\//)
					print from, "top", f, h
				else if (to != from)
					print from, to, f, h
			}
		}
	}')

while read -r from to file inc; do
	[ -z "$from" ] && continue
	case "$from:$to" in
		schema:*) fail "$file includes $inc: schema/ depends on nothing else" ;;
		*:top) continue ;;
		cdc:document|document:cdc) fail "$file includes $inc: cdc/ and document/ never meet" ;;
		sink:cdc) fail "$file includes $inc: sinks know documents, not change records" ;;
		api:check) ;;
		*:check) fail "$file includes $inc: only api/ sees check/; what a definition binds to is binding/'s" ;;
	esac
	case "$inc" in
		engine/engine_index.h) [ "$from" != engine ] && fail "$file includes $inc: the engine's structs are its own" ;;
	esac
done <<< "$edges"

# the engine's shared header and the seed's see nothing of cdc/, document/ or sink/
for h in engine/engine.h engine/seed.h store/catalog_signal.h; do
	echo "$includes" | awk -v h="$h" '
		NF { direct[$1] = direct[$1] " " $2 }
		END {
			n = split(direct[h], todo, " ")
			while (n > 0) {
				x = todo[n--]
				if (x in seen) continue
				seen[x] = 1
				if (x ~ /^(cdc|document|sink)\//)
					printf "layout: %s includes %s: the engine'"'"'s callers see neither records nor statements\n", h, x
				m = split(direct[x], more, " ")
				for (i = 1; i <= m; i++) todo[++n] = more[i]
			}
		}' | grep . && status=1
done

# signal kinds are defined in store/catalog_signal.h alone, and rows of
# flusso.signal are inserted there only (catalog_insert_watermark() by the
# seed, engine/seed.c)
(cd "$src" && grep -n '^#define SIGNAL_' *.[ch] */*.[ch] | grep -v '^store/catalog_signal.h:' |
	sed 's/^\([^:]*:[0-9]*\):.*/layout: \1 defines a signal kind: the kinds are store\/catalog_signal.h'"'"'s/' | grep . && exit 1
	grep -ln 'catalog_insert_watermark' *.c */*.c | grep -v '^store/\|^engine/seed.c$' |
	sed 's/^/layout: /; s/$/ inserts a watermark: only the seed does (engine\/seed.c)/' | grep . && exit 1
	exit 0) || status=1

# store/ runs its statements through util/spi_run.c alone
(cd "$src" && grep -ln 'SPI_connect' store/*.c |
	sed 's/^/layout: /; s/$/ connects to SPI: the store runs its statements through util\/spi_run.c/' | grep . && exit 1
	exit 0) || status=1

# only engine/ includes both cdc/ and document/
(cd "$src" && for f in */*.c; do
	[ "${f%%/*}" = engine ] && continue
	if grep -q '^#include "cdc/' "$f" && grep -q '^#include "document/' "$f"; then
		echo "layout: $f includes both cdc/ and document/: only the engine is the bridge"
		exit 1
	fi
done) || status=1

# the output plugin's files: cdc/plugin.c, the headers of ours it reaches,
# and the .c file beside each
(cd "$src" && todo="cdc/plugin.c" && seen="" && bad=0 && while [ -n "$todo" ]; do
	set -- $todo
	f=$1
	shift
	todo="$*"
	case " $seen " in
		*" $f "*) continue ;;
	esac
	seen="$seen $f"
	for inc in $(grep -ho '^#include "[^"]*"' "$f" | sed 's/#include "//; s/"$//'); do
		[ -f "$inc" ] || continue
		case "$inc" in
			cdc/*.h)
				todo="$todo $inc"
				[ -f "${inc%.h}.c" ] && todo="$todo ${inc%.h}.c"
				;;
			compat.h) ;;
			*)
				echo "layout: $f includes $inc: the output plugin runs in user backends too, and includes nothing of ours outside cdc/ but compat.h"
				bad=1
				;;
		esac
	done
done && exit $bad) || status=1

# memory context switches: kept, restored, or a loop's turn; bare only in the helpers
(cd "$src" && bad=0 && for f in *.c */*.c; do
	case "$f" in
		util/xact.c|util/attempt.c) continue ;;
	esac
	awk -v file="$f" '
		FNR == NR {
			if (match($0, /[A-Za-z_][A-Za-z_0-9>.-]* *= *MemoryContextSwitchTo\(/)) {
				name = substr($0, RSTART, RLENGTH)
				sub(/ *= *MemoryContextSwitchTo\($/, "", name)
				kept[name] = 1
			}
			next
		}
		/^[ \t]*(\(void\) *)?MemoryContextSwitchTo\(.*\);/ {
			arg = $0
			sub(/^[ \t]*(\(void\) *)?MemoryContextSwitchTo\(/, "", arg)
			sub(/\);.*$/, "", arg)
			turn = arg ~ /(turn|pass)_context$/ && previous == "MemoryContextReset(" arg ");"
			if (!(arg in kept) && !turn) {
				printf "layout: %s:%d switches to %s by hand: keep what a switch replaces and restore it, or let the helper that begins or ends the transaction return to the caller'"'"'s context\n", file, FNR, arg
				bad = 1
			}
		}
		NF { previous = $0; gsub(/^[ \t]+|[ \t]+$/, "", previous) }
		END { exit bad }' "$f" "$f" || bad=1
done && exit $bad) || status=1

# folder names the server's headers own: those of the server we build
# against, and the ones every supported version has
pg_dirs="access archive backup bootstrap catalog commands common datatype executor
	fe_utils foreign jit lib libpq mb nodes optimizer parser partitioning port
	portability postmaster regex replication rewrite snowball statistics storage
	tcop tsearch utils"
server_include=$(pg_config --includedir-server 2>/dev/null) &&
	pg_dirs="$pg_dirs $(cd "$server_include" 2>/dev/null && ls -d */ 2>/dev/null | tr -d /)"
pg_dirs=$(echo $pg_dirs | tr ' ' '\n' | sort -u)
for dir in "$src"/*/; do
	name=$(basename "$dir")
	for pg in $pg_dirs; do
		[ "$name" = "$pg" ] && fail "src/$name/ is named like PostgreSQL's include directory $pg/, whose headers it would shadow"
	done
done
dupes=$(cd "$src" && ls *.[ch] */*.[ch] | xargs -n1 basename | sort | uniq -d | sort -u)
for b in $dupes; do
	fail "$b is the basename of more than one file: $(cd "$src" && ls */"$b" "$b" 2>/dev/null | tr '\n' ' ')"
done

# flusso's tables in SQL text: only in store/, a file per table there
owned=$(cd "$src" && ls store/catalog_*.c 2>/dev/null | sed 's|store/catalog_||; s|\.c$||')
scripts=$(ls "$src"/../sql/flusso--*.sql 2>/dev/null)
if [ -n "$scripts" ]; then
	for table in $(sed -n 's/^CREATE \(UNLOGGED \)\{0,1\}TABLE flusso\.\([a-z_0-9]*\).*/\2/p' $scripts | sort -u); do
		echo "$owned" | grep -qx "$table" ||
			fail "flusso.$table has no file in store/ (store/catalog_$table.c): every table of flusso's has one, which alone names it in SQL"
	done
	# the sequences are store/'s too
	owned="$owned $(sed -n 's/^CREATE SEQUENCE flusso\.\([a-z_0-9]*\).*/\1/p' $scripts | sort -u)"
fi
owned=$(echo $owned | tr ' ' '|')
if [ -n "$owned" ]; then
	(cd "$src" && bad=0 && for f in *.[ch] */*.[ch]; do
		case "$f" in
			store/*) continue ;;
		esac
		awk -v file="$f" -v tables="$owned" '
			BEGIN {
				name = "flusso\\.(" tables ")([^a-z_0-9]|$)"
				named = "((FROM|INTO|UPDATE|JOIN|USING|TABLE|ONLY)[ \t]+|'"'"')" name
				macro = "FLUSSO_SCHEMA[ \t]*\"\\.(" tables ")([^a-z_0-9]|$)"
			}
			/^[ \t]*(\/\*|\*)/ { next }
			{
				if ($0 ~ macro)
					report(FNR)
				line = $0
				while (match(line, /"([^"\\]|\\.)*"/)) {
					if (text == "")
						first = FNR
					text = text substr(line, RSTART + 1, RLENGTH - 2)
					line = substr(line, RSTART + RLENGTH)
				}
				if ($0 ~ /;[ \t]*(\/\*.*)?$/ || $0 ~ /^[ \t]*[{}]/) {
					if (text ~ named)
						report(first)
					text = ""
				}
			}
			function report(at) {
				printf "layout: %s:%d names one of flusso'"'"'s tables or sequences in SQL: only store/ does (call a verb there)\n", file, at
				bad = 1
			}
			END { exit bad }' "$f" || bad=1
	done && exit $bad) || status=1
fi

# no cycle: a depth-first walk over the folder graph
cycle=$(echo "$includes" | awk 'NF {
		a = index($1, "/") ? substr($1, 1, index($1, "/") - 1) : "top"
		b = index($2, "/") ? substr($2, 1, index($2, "/") - 1) : "top"
		if (a != b && a != "top" && b != "top") print a, b
	}' | sort -u | awk '
	{ adj[$1] = adj[$1] " " $2; nodes[$1]; nodes[$2] }
	function visit(n, path,   i, k, next_) {
		if (state[n] == 1) { print path " " n; found = 1; return }
		if (state[n] == 2 || found) return
		state[n] = 1
		k = split(adj[n], next_, " ")
		for (i = 1; i <= k; i++) visit(next_[i], path " " n)
		state[n] = 2
	}
	END { for (n in nodes) if (!found) visit(n, "") }' | head -n 1)
[ -n "$cycle" ] && fail "a cycle between folders:$cycle"

[ $status -eq 0 ] && echo "layout: the folders of src/ depend on each other as allowed"
exit $status

#!/usr/bin/env bash
#
# node.sh: a real single-node OpenSearch 2.19 for flusso's tests, embedded from
# Maven jars (pom.xml, EmbeddedNode.java).  It owns target/ beside it and, for
# each node, a work directory WORKDIR holding node.pid, node.log (WARN and up),
# node.out (the JVM's stdout/stderr) and the node's data, kept across restarts.
#
#   node.sh build                      build if pom.xml or src/ changed
#   node.sh start WORKDIR HTTP_PORT    start in the background, wait for yellow
#   node.sh stop WORKDIR               SIGTERM, SIGKILL after 30 s
#   node.sh kill WORKDIR               SIGKILL at once (a simulated outage)
#
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
stamp=$here/target/.built

# The JVM flags the OpenSearch distribution's launcher would pass, a fixed heap,
# and C1 only (TieredStopAtLevel=1: starts ~0.8 s sooner, little to lose in tests).
jvm=(java -Xms512m -Xmx512m -XX:TieredStopAtLevel=1 -Xss1m
	-Dfile.encoding=UTF-8 -Djava.awt.headless=true -Djna.nosys=true
	-Djava.locale.providers=SPI,COMPAT
	-Dio.netty.noUnsafe=true -Dio.netty.noKeySetOptimization=true
	-Dio.netty.recycler.maxCapacityPerThread=0 -Dio.netty.allocator.numDirectArenas=0
	-Dlog4j.shutdownHookEnabled=false -Dlog4j2.disable.jmx=true
	-cp "$here/target/flusso-opensearch-node-1.jar:$here/target/lib/*")

build() {
	if [ -f "$stamp" ] && [ -z "$(find "$here/pom.xml" "$here/src" -newer "$stamp" -print -quit)" ]; then
		echo "node.sh: build is up to date"
		return
	fi
	echo "node.sh: building the OpenSearch node (mvn package, then one start for the CDS archive)"
	# Debian's Maven 3.8.7 prints stray colour resets even with -q -B: strip them.
	mvn -q -B -f "$here/pom.xml" package -DskipTests 2>&1 | sed 's/\x1b\[0m//g'
	# One start to yellow records the classes it loads into a class-data-sharing
	# archive; starts that map it come up in ~1.2 s instead of ~2.7 s.  (CDS wants
	# jars only on the class path, hence the launcher jar, not target/classes.)
	local tmp
	tmp=$(mktemp -d)
	rm -f "$here/target/node.jsa"
	if ! "${jvm[@]}" -XX:ArchiveClassesAtExit="$here/target/node.jsa" -Dflusso.node.train=true \
		-Dflusso.node.dir="$tmp" flusso.opensearch.EmbeddedNode "$tmp" 0 \
		</dev/null >"$here/target/cds-train.out" 2>&1; then
		echo "node.sh: no CDS archive (see target/cds-train.out); nodes start slower" >&2
		rm -f "$here/target/node.jsa"
	fi
	rm -rf "$tmp"
	touch "$stamp"
}

# Whether process $1 is alive and is a node (a zombie's cmdline is empty).
alive() { grep -qa flusso.opensearch.EmbeddedNode "/proc/$1/cmdline" 2>/dev/null; }

# Whether our child $1 still runs: alive, or not yet done exec'ing java.
running() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat" 2>/dev/null; }

# The pid in WORKDIR/node.pid if that node is alive.
node_pid() {
	local pid
	pid=$(cat "$1/node.pid" 2>/dev/null) && alive "$pid" && echo "$pid"
}

health() { curl -fsS -o /dev/null "http://127.0.0.1:$1/_cluster/health?wait_for_status=yellow&timeout=1s" 2>/dev/null; }

start() {
	local dir=$1 port=$2 pid
	build
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if pid=$(node_pid "$dir"); then
		echo "node.sh: a node already runs in $dir (pid $pid)" >&2
		exit 1
	fi
	if health "$port"; then
		echo "node.sh: port $port already answers; is another node running?" >&2
		exit 1
	fi
	local cds=()
	[ -f "$here/target/node.jsa" ] && cds=(-XX:SharedArchiveFile="$here/target/node.jsa")
	"${jvm[@]}" "${cds[@]}" -Dflusso.node.dir="$dir" flusso.opensearch.EmbeddedNode "$dir" "$port" \
		</dev/null >>"$dir/node.out" 2>&1 &
	pid=$!
	echo "$pid" >"$dir/node.pid"
	local deadline=$((SECONDS + 120))
	while ((SECONDS < deadline)) && running "$pid"; do
		if health "$port"; then
			echo "node.sh: OpenSearch is up on 127.0.0.1:$port (pid $pid)"
			return
		fi
		sleep 0.2
	done
	echo "node.sh: OpenSearch did not come up on port $port; end of its logs:" >&2
	tail -n 30 "$dir/node.out" "$dir/node.log" >&2 || true
	kill_node "$dir"
	exit 1
}

stop() {
	local dir=$1 pid i
	if pid=$(node_pid "$dir"); then
		kill -TERM "$pid"
		for ((i = 0; i < 300; i++)); do
			alive "$pid" || break
			sleep 0.1
		done
		if alive "$pid"; then
			echo "node.sh: node $pid ignored SIGTERM for 30 s: SIGKILL" >&2
			kill -KILL "$pid"
			while alive "$pid"; do sleep 0.1; done
		fi
	fi
	rm -f "$dir/node.pid"
}

kill_node() {
	local dir=$1 pid
	if pid=$(node_pid "$dir"); then
		kill -KILL "$pid"
		while alive "$pid"; do sleep 0.1; done
	fi
	rm -f "$dir/node.pid"
}

case "${1:-}" in
build) build ;;
start) [ $# -eq 3 ] || { echo "usage: node.sh start WORKDIR HTTP_PORT" >&2; exit 2; }; start "$2" "$3" ;;
stop) [ $# -eq 2 ] || { echo "usage: node.sh stop WORKDIR" >&2; exit 2; }; stop "$2" ;;
kill) [ $# -eq 2 ] || { echo "usage: node.sh kill WORKDIR" >&2; exit 2; }; kill_node "$2" ;;
*) echo "usage: node.sh build | start WORKDIR HTTP_PORT | stop WORKDIR | kill WORKDIR" >&2; exit 2 ;;
esac

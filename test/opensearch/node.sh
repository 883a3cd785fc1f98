#!/usr/bin/env bash
#
# node.sh: real OpenSearch and Elasticsearch nodes for flusso's tests,
# embedded from Maven jars (pom.xml, src/main/ for OpenSearch, src/es/ for
# Elasticsearch): single nodes, or clusters of several nodes on 127.0.0.1.
# FLUSSO_OPENSEARCH_LINE chooses the line: 2 (the default: OpenSearch 2.19.6,
# on Java 17 or later), 3 (OpenSearch 3.9.0, on Java 21 or later), es8
# (Elasticsearch 8.19.21, on Java 17 or later) or es9 (Elasticsearch 9.5.3, on
# Java 21 or later); pom.xml names the exact versions.  It owns target/ beside
# it, where each line is built apart (target/line2/, target/line3/,
# target/linees8/, target/linees9/: building one leaves the others as they
# are), and, for each node, a work directory WORKDIR holding node.pid,
# node.log (WARN and up), node.out (the JVM's stdout/stderr) and the node's
# data, kept across restarts; a member of a cluster also holds cluster.yml,
# its place in the cluster (cluster name, node name, transport port, seed
# hosts, initial cluster managers / master nodes).
#
# The lines differ in what the node answers: an Elasticsearch node takes
# master_timeout where OpenSearch takes cluster_manager_timeout, and refuses
# parameters it does not know (400).  Each node keeps its engine's default
# settings where tests could see them: sorting on _id, for one, is refused
# by Elasticsearch 8 and 9 (fielddata on _id is off there), so tests page
# with the scroll API.  GET / answers as the distribution does:
# version.number, and for OpenSearch version.distribution "opensearch".
#
# Elasticsearch with security (es8, es9; single nodes only): FLUSSO_ES_SECURITY=1
# on start loads X-Pack with security on, plain HTTP (no TLS), a basic
# license and, in the file realm, one superuser FLUSSO_ES_USER (default
# flusso_test_admin) with password FLUSSO_ES_PASSWORD (default
# flusso-test-password), so a test can create API keys
# (curl -u USER:PASSWORD -XPOST .../_security/api_key -d '{"name":"t"}') and
# use them (Authorization: ApiKey <encoded>); a request without credentials
# gets 401.  (start's health checks authenticate with them; stop and kill
# need none.)
#
#   node.sh build                      build the line if pom.xml or its src/ changed
#   node.sh start WORKDIR HTTP_PORT    start in the background, wait for yellow (a
#                                      cluster member: wait until it has joined)
#   node.sh cluster DIR HTTP_PORT:TRANSPORT_PORT...
#                                      start one cluster member per pair of ports,
#                                      in DIR/node-1, DIR/node-2...; wait until all
#                                      have joined and the cluster is yellow
#   node.sh stop WORKDIR               SIGTERM, SIGKILL after 30 s
#   node.sh kill WORKDIR               SIGKILL at once (a simulated outage)
#   node.sh java                       say which JDK the line runs on (exit 1 if none)
#
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
line=${FLUSSO_OPENSEARCH_LINE:-2}
# What the line decides: the Java minimum, its sources beside src/lineN/, the
# main class, the health timeout parameter, the initial-managers setting.
case $line in
2 | 3)
	java_min=$( ((line == 2)) && echo 17 || echo 21)
	engine=OpenSearch label="OpenSearch $line.x" shared=main line_src=line$line
	main_class=flusso.opensearch.EmbeddedNode
	manager_timeout=cluster_manager_timeout initial_managers=cluster.initial_cluster_manager_nodes
	;;
es8 | es9)
	java_min=$([ "$line" = es8 ] && echo 17 || echo 21)
	engine=Elasticsearch label="Elasticsearch ${line#es}.x" shared=es line_src=$line
	main_class=flusso.elasticsearch.EmbeddedNode
	manager_timeout=master_timeout initial_managers=cluster.initial_master_nodes
	;;
*) echo "node.sh: FLUSSO_OPENSEARCH_LINE is 2, 3, es8 or es9, not '$line'" >&2; exit 2 ;;
esac
security=${FLUSSO_ES_SECURITY:-0}
es_user=${FLUSSO_ES_USER:-flusso_test_admin}
es_password=${FLUSSO_ES_PASSWORD:-flusso-test-password}
if [ "$security" = 1 ] && [ "$engine" != Elasticsearch ]; then
	echo "node.sh: FLUSSO_ES_SECURITY=1 is for the Elasticsearch lines (es8, es9), not '$line'" >&2
	exit 2
fi
target=$here/target/line$line
stamp=$target/.built
# The mtime every jar of the class path is given (see pin_jars).
jar_mtime=946684800

# The feature version of the JDK in $1 (17 for 17.0.15), from its release
# file, else from what its java says.
jdk_version() {
	local v
	v=$(sed -n 's/^JAVA_VERSION="\(1\.\)\{0,1\}\([0-9]*\).*/\2/p' "$1/release" 2>/dev/null)
	[ -n "$v" ] || v=$("$1/bin/java" -version 2>&1 | sed -n '1s/.*version "\(1\.\)\{0,1\}\([0-9]*\).*/\2/p')
	echo "${v:-0}"
}

# Sets jdk and jdk_version to the first JDK of version java_min or later
# among JAVA_HOME's, the one of java on the PATH and those in /usr/lib/jvm/;
# exits saying what was found if none is.
find_jdk() {
	local path_java home v seen=()
	path_java=$(command -v java || true)
	for home in ${JAVA_HOME:+"$JAVA_HOME"} ${path_java:+"$(dirname "$(dirname "$(readlink -f "$path_java")")")"} \
		/usr/lib/jvm/*; do
		[ -x "$home/bin/java" ] || continue
		home=$(readlink -f "$home")
		[[ " ${seen[*]} " == *" $home "* ]] && continue
		v=$(jdk_version "$home")
		if ((v >= java_min)); then
			jdk=$home
			jdk_version=$v
			return
		fi
		seen+=("$home" "($v)")
	done
	echo "node.sh: $label needs Java $java_min or later, and there is none in JAVA_HOME," \
		"on the PATH or in /usr/lib/jvm/ (found: ${seen[*]:-none}); install a JDK $java_min or later" \
		"(a JDK: building the node compiles) or point JAVA_HOME at one" >&2
	exit 1
}

# Sets jdk, jdk_version and jvm, the command that runs a node: the JVM flags
# the distribution's launcher would pass, a fixed heap, and C1 only
# (TieredStopAtLevel=1: starts ~0.8 s sooner, little to lose in tests).  COMPAT,
# the locale provider OpenSearch asks for, is gone from JDK 23 on: CLDR then,
# as OpenSearch's launcher does; Elasticsearch 8.19 and 9 ask for CLDR.  For
# Elasticsearch, es.distribution.type is what GET / says as build_type.  (From
# JDK 24 on, Lucene's mmap warns in node.out that it calls restricted methods: --enable-native-access=ALL-UNNAMED
# would silence it, but makes the JVM refuse the module graph of its own CDS
# archive, dumped without it, and log that as an error.)  The class path is
# relative: the JVM runs from $target (see launch).
setup_java() {
	find_jdk
	jvm=("$jdk/bin/java" -Xms512m -Xmx512m -XX:TieredStopAtLevel=1 -Xss1m
		-Dfile.encoding=UTF-8 -Djava.awt.headless=true -Djna.nosys=true
		-Djava.locale.providers=$(if [ $engine = Elasticsearch ]; then echo CLDR
			elif ((jdk_version >= 23)); then echo SPI,CLDR; else echo SPI,COMPAT; fi)
		-Dio.netty.noUnsafe=true -Dio.netty.noKeySetOptimization=true
		-Dio.netty.recycler.maxCapacityPerThread=0 -Dio.netty.allocator.numDirectArenas=0
		-Dlog4j.shutdownHookEnabled=false -Dlog4j2.disable.jmx=true)
	if [ $engine = Elasticsearch ]; then
		jvm+=(-Des.distribution.type=tar -Dlog4j2.formatMsgNoLookups=true)
	fi
}

# The class-data-sharing archive records the class path and each jar's size and
# mtime, and is refused if any differs.  The class path is relative to $target
# (so a copy of test/ elsewhere, as test/check.sh makes, matches it), listed in
# a fixed order in $target/classpath, and every jar's mtime is pinned, so that
# a copy that did not keep them (cp -r) matches it too.
pin_jars() {
	if [ -n "$(find "$target/lib" "$target/flusso-opensearch-node-1.jar" -newermt "@$jar_mtime" -print -quit)" ]; then
		touch -m -d "@$jar_mtime" "$target/lib"/*.jar "$target/flusso-opensearch-node-1.jar" 2>/dev/null || true
	fi
}

# What a build is made of: the JDK and its flags (the CDS archive depends on
# them), pom.xml and the line's sources, by content (a copy of test/ that did
# not keep the timestamps is still up to date).
inputs() {
	echo "${jvm[*]}"
	(cd "$here" && find pom.xml "src/$shared" "src/$line_src" -type f | LC_ALL=C sort | xargs sha1sum)
}

build() {
	setup_java
	if [ "$(cat "$stamp" 2>/dev/null)" = "$(inputs)" ]; then
		echo "node.sh: build is up to date ($label, $target)"
		return
	fi
	[ -x "$jdk/bin/javac" ] || {
		echo "node.sh: building the node needs a JDK, and $jdk has no javac" >&2
		exit 1
	}
	echo "node.sh: building the $label node on Java $jdk_version (mvn package, then one start for the CDS archive)"
	# Maven's own checks go by timestamps, which a copy of test/ (cp -r) resets:
	# what it built before goes, so that it builds from these sources.
	rm -rf "$stamp" "$target/lib" "$target/classes" "$target/flusso-opensearch-node-1.jar"
	# what an older node.sh built straight into target/
	find "$here/target" -mindepth 1 -maxdepth 1 ! -name 'line*' -exec rm -rf {} + 2>/dev/null || true
	# Debian's Maven 3.8.7 prints stray colour resets even with -q -B: strip them;
	# on JDK 24 and later its Guice warns of sun.misc.Unsafe unless allowed.
	local maven_opts=${MAVEN_OPTS:-}
	if ((jdk_version >= 24)); then maven_opts="$maven_opts --sun-misc-unsafe-memory-access=allow"; fi
	JAVA_HOME=$jdk MAVEN_OPTS=$maven_opts mvn -q -B -f "$here/pom.xml" -Dopensearch.line="$line" \
		package -DskipTests 2>&1 | sed 's/\x1b\[0m//g'
	(cd "$target" && { echo flusso-opensearch-node-1.jar; ls lib | LC_ALL=C sort | sed 's|^|lib/|'; } |
		paste -sd: >classpath)
	pin_jars
	# One start to yellow records the classes it loads into a class-data-sharing
	# archive; starts that map it come up in ~1.2 s instead of ~2.3 s (2.19 on
	# Java 17) or ~1.4 s instead of ~3.2 s (3.9 on Java 25); Elasticsearch in
	# ~0.9 s (8.19, Java 17) or ~1.1 s (9.5, Java 25) instead of ~1.9-2.3 s.
	# (CDS wants jars only on the class path, hence the launcher jar, not
	# target/classes.)
	local tmp
	tmp=$(mktemp -d)
	rm -f "$target/node.jsa"
	if ! (cd "$target" && exec "${jvm[@]}" -XX:ArchiveClassesAtExit=node.jsa -Dflusso.node.train=true \
		-Dflusso.node.dir="$tmp" -cp "$(cat classpath)" $main_class "$tmp" 0 \
		</dev/null >"$target/cds-train.out" 2>&1); then
		echo "node.sh: no CDS archive (see $target/cds-train.out); nodes start slower" >&2
		rm -f "$target/node.jsa"
	fi
	rm -rf "$tmp"
	inputs >"$stamp"
}

# Whether process $1 is alive and is a node, of either engine (a zombie's
# cmdline is empty).
alive() { grep -qaE 'flusso\.(opensearch|elasticsearch)\.EmbeddedNode' "/proc/$1/cmdline" 2>/dev/null; }

# Whether our child $1 still runs: alive, or not yet done exec'ing java.
running() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat" 2>/dev/null; }

# The pid in WORKDIR/node.pid if that node is alive.
node_pid() {
	local pid
	pid=$(cat "$1/node.pid" 2>/dev/null) && alive "$pid" && echo "$pid"
}

# Whether the node on port $1 answers that the cluster is yellow or green,
# with $2 nodes at least (1 if not said): it is in a cluster with an elected
# cluster manager.  A secure node is asked with the superuser's credentials.
health() {
	local auth=()
	[ "$security" = 1 ] && auth=(-u "$es_user:$es_password")
	curl -fsS -o /dev/null --max-time 5 "${auth[@]}" \
		"http://127.0.0.1:$1/_cluster/health?wait_for_status=yellow&wait_for_nodes=%3E%3D${2:-1}&timeout=1s&$manager_timeout=1s" 2>/dev/null
}

# Checks that no node runs in WORKDIR $1 and nothing answers on port $2.
check_free() {
	local pid
	if pid=$(node_pid "$1"); then
		echo "node.sh: a node already runs in $1 (pid $pid)" >&2
		exit 1
	fi
	if health "$2"; then
		echo "node.sh: port $2 already answers; is another node running?" >&2
		exit 1
	fi
}

# Start the node of WORKDIR $1 (absolute) on HTTP port $2 in the background.
launch() {
	local dir=$1 port=$2 cds=() secure=()
	pin_jars
	[ -f "$target/node.jsa" ] && cds=(-XX:SharedArchiveFile=node.jsa)
	[ "$security" = 1 ] && secure=(-Dflusso.node.security=true -Dflusso.node.user="$es_user"
		-Dflusso.node.password="$es_password")
	(cd "$target" && exec "${jvm[@]}" "${cds[@]}" "${secure[@]}" -Dflusso.node.dir="$dir" -cp "$(cat classpath)" \
		$main_class "$dir" "$port") </dev/null >>"$dir/node.out" 2>&1 &
	echo "$!" >"$dir/node.pid"
}

# The end of the logs of the node of WORKDIR $1, on stderr.
logs() { tail -n 30 "$1/node.out" "$1/node.log" >&2 || true; }

start() {
	local dir=$1 port=$2 pid
	build
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	check_free "$dir" "$port"
	launch "$dir" "$port"
	pid=$(cat "$dir/node.pid")
	local deadline=$((SECONDS + 120))
	while ((SECONDS < deadline)) && running "$pid"; do
		if health "$port"; then
			if [ -f "$dir/cluster.yml" ]; then
				echo "node.sh: $label is up on 127.0.0.1:$port (pid $pid), in the cluster of $(dirname "$dir")"
			elif [ "$security" = 1 ]; then
				echo "node.sh: $label is up on 127.0.0.1:$port (pid $pid), with security (user $es_user)"
			else
				echo "node.sh: $label is up on 127.0.0.1:$port (pid $pid)"
			fi
			return
		fi
		sleep 0.2
	done
	echo "node.sh: $engine did not come up on port $port; end of its logs:" >&2
	logs "$dir"
	kill_node "$dir"
	exit 1
}

# A cluster: DIR/node-I for the I-th pair of ports HTTP_PORT:TRANSPORT_PORT,
# all of them manager-eligible data nodes, seeding each other.
cluster() {
	local base=$1 i n pair dir seeds='' names=''
	shift
	n=$#
	if [ "$security" = 1 ]; then
		echo "node.sh: FLUSSO_ES_SECURITY=1 is for single nodes (start), not clusters" >&2
		exit 2
	fi
	build
	mkdir -p "$base"
	base=$(cd "$base" && pwd)
	local dirs=() ports=()
	for ((i = 1; i <= n; i++)); do
		pair=${!i}
		[[ $pair =~ ^[0-9]+:[0-9]+$ ]] || { echo "node.sh: not HTTP_PORT:TRANSPORT_PORT: $pair" >&2; exit 2; }
		dirs+=("$base/node-$i")
		ports+=("${pair%%:*}")
		seeds+="${seeds:+, }\"127.0.0.1:${pair##*:}\""
		names+="${names:+, }\"node-$i\""
	done
	for ((i = 1; i <= n; i++)); do
		dir=${dirs[i - 1]}
		mkdir -p "$dir"
		check_free "$dir" "${ports[i - 1]}"
		pair=${!i}
		# the initial cluster managers only count when the cluster first forms
		cat >"$dir/cluster.yml" <<-EOF
			# node.sh cluster: this node's place in the cluster of $base
			cluster.name: $(basename "$base")
			node.name: node-$i
			transport.port: ${pair##*:}
			discovery.seed_hosts: [$seeds]
			$initial_managers: [$names]
		EOF
	done
	for ((i = 0; i < n; i++)); do
		launch "${dirs[i]}" "${ports[i]}"
	done
	local deadline=$((SECONDS + 180)) up
	while ((SECONDS < deadline)); do
		up=0
		for ((i = 0; i < n; i++)); do
			running "$(cat "${dirs[i]}/node.pid")" || break 2
			health "${ports[i]}" "$n" && up=$((up + 1))
		done
		if ((up == n)); then
			echo "node.sh: a cluster of $n $label nodes is up on 127.0.0.1, HTTP ports ${ports[*]}"
			return
		fi
		sleep 0.2
	done
	echo "node.sh: the cluster of $base did not form; end of its nodes' logs:" >&2
	for dir in "${dirs[@]}"; do
		logs "$dir"
	done
	for dir in "${dirs[@]}"; do
		kill_node "$dir"
	done
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

usage="usage: node.sh build | start WORKDIR HTTP_PORT | cluster DIR HTTP_PORT:TRANSPORT_PORT... | stop WORKDIR | kill WORKDIR | java"
case "${1:-}" in
build) build ;;
java) find_jdk && echo "node.sh: $label runs on Java $jdk_version, $jdk" ;;
start) [ $# -eq 3 ] || { echo "usage: node.sh start WORKDIR HTTP_PORT" >&2; exit 2; }; start "$2" "$3" ;;
cluster) [ $# -ge 3 ] || { echo "usage: node.sh cluster DIR HTTP_PORT:TRANSPORT_PORT..." >&2; exit 2; }; shift; cluster "$@" ;;
stop) [ $# -eq 2 ] || { echo "usage: node.sh stop WORKDIR" >&2; exit 2; }; stop "$2" ;;
kill) [ $# -eq 2 ] || { echo "usage: node.sh kill WORKDIR" >&2; exit 2; }; kill_node "$2" ;;
*) echo "$usage" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
#
# check.sh: flusso's test suite, on PostgreSQL 15 (Debian's, installed by
# `make build-install`) and then 16, 17 and 18 (test/deps.sh's, which this
# builds and installs into from scratch copies of the tree; 17 in its
# Debian 13 root).  On each: pg_regress on a temporary instance for the
# regression tests named on the command line, then TAP tests, as an
# unprivileged OS user, from a scratch copy of the tests that user owns.
# 15 runs every TAP file and the packagers' `make installcheck`, then the
# OpenSearch TAP files again against OpenSearch 3.x, Elasticsearch 8.x and
# Elasticsearch 9.x nodes (FLUSSO_OPENSEARCH_LINES below); 16, 17 and 18
# run the TAP files that exercise what differs between versions
# (FLUSSO_TAP_16, FLUSSO_TAP_17, FLUSSO_TAP_18 below).  Exits non-zero if
# anything failed.
#
# FLUSSO_PG_VERSIONS="15" (or "16 17", ...) runs those versions only.
# FLUSSO_TAP_15 names the TAP files 15 runs on the default line (every
# file if unset); "none" leaves them and `make installcheck` out, while
# pg_regress and the other lines' TAP files still run: with
# FLUSSO_OPENSEARCH_LINES="es8" too, 15 runs the regression tests named
# and Elasticsearch 8's TAP files alone.
#
set -uo pipefail
source "$(dirname "$0")/common.sh"

versions=${FLUSSO_PG_VERSIONS:-15 16 17 18}
# the worker, documents, seed, coverage, upgrade, OpenSearch and failover
# tests: slots, decoding, the catalog, bgworkers and HA are what versions change
tap_newer="003_worker 004_documents 006_seed 008_coverage 010_upgrade 011_opensearch 025_failover 041_wait"
tap_16=${FLUSSO_TAP_16:-$tap_newer}
tap_17=${FLUSSO_TAP_17:-$tap_newer}
# 18 also runs flusso on a subscriber (046); there and on 15 its publisher
# is the other version (publisher_install below)
tap_18=${FLUSSO_TAP_18:-"$tap_newer 046_subscriber"}
# 15's TAP files of the default line: every file unless named, "none" for
# none (and no `make installcheck` then: see above)
tap_15=${FLUSSO_TAP_15:-}
# OpenSearch and Elasticsearch lines: every TAP file ships to nodes of the
# default line (2: OpenSearch 2.19); after the 15 leg, the files that
# create, seed, ship, swap, verify and fail run again on 15 against nodes
# of line 3 (OpenSearch 3.x, on Java 21 or later), then of es8
# (Elasticsearch 8.19, on Java 17 or later) and es9 (Elasticsearch 9.x, on
# Java 21 or later): test/opensearch/node.sh; FLUSSO_OPENSEARCH_LINES="2"
# leaves those out, "2 es8" runs Elasticsearch 8 alone of them
opensearch_lines=${FLUSSO_OPENSEARCH_LINES:-2 3 es8 es9}
tap_opensearch3=${FLUSSO_TAP_OPENSEARCH3:-"011_opensearch 013_opensearch_faults 014_opensearch_tls 033_seed_ranges 035_copies 038_opensearch_cluster 039_unchanged_opensearch 042_wait_opensearch 043_one_cluster 045_foreign_versions 048_live_settings 050_fields_in_place"}
# the same files against Elasticsearch, and its own ways of authenticating
# (047: API keys, a bearer token, on a node with security), unless told
# otherwise
tap_es8=${FLUSSO_TAP_ES8:-"$tap_opensearch3 047_elasticsearch_auth"}
tap_es9=${FLUSSO_TAP_ES9:-"$tap_opensearch3 047_elasticsearch_auth"}
pg15_config=$PG_CONFIG
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo

# FLUSSO_CHECK_IN_ROOT: set when check.sh runs itself again in PostgreSQL
# 17's Debian 13 root, for that leg alone (see 17 below): what does not
# depend on the server (the node's build, layout, packaging) ran outside.
in_root=${FLUSSO_CHECK_IN_ROOT:-}

# the embedded OpenSearch node the TAP tests ship to (a no-op once built);
# copied with its timestamps, so that the copy is seen as built too
if [ -z "$in_root" ]; then
	for line in $opensearch_lines; do
		FLUSSO_OPENSEARCH_LINE=$line bash "$FLUSSO_ROOT/test/opensearch/node.sh" build || exit 1
	done
fi

# with no names given, every regression test that has an expected output
if [ $# -eq 0 ]; then
	for f in "$FLUSSO_ROOT"/expected/*.out; do
		# (name_1.out is another expected output of name)
		[[ $f =~ _[0-9]\.out$ ]] && continue
		set -- "$@" "$(basename "$f" .out)"
	done
fi

status=0
work_dirs=()
failures=()

if [ -z "$in_root" ]; then
	echo "== layout"
	bash "$FLUSSO_ROOT/test/layout.sh" "$FLUSSO_ROOT/src" ||
		{ status=1; failures+=("layout: see its output above"); }
	echo "== packaging"
	bash "$FLUSSO_ROOT/test/packaging.sh" ||
		{ status=1; failures+=("packaging: see its output above"); }
fi

# scratch_build MAJOR: build and install flusso for the server
# use_pg_config chose, from a scratch copy, so that the 15 build's objects
# stay; fails if the build failed or warned
scratch_build() {
	local major=$1 build
	echo "== build and install ($major)"
	build=$(mktemp -d --tmpdir --suffix=.flusso-build-$major)
	work_dirs+=("$build")
	cp -r --preserve=timestamps "$FLUSSO_ROOT/Makefile" "$FLUSSO_ROOT/flusso.control" \
		"$FLUSSO_ROOT/flusso.map" "$FLUSSO_ROOT/src" "$FLUSSO_ROOT/sql" "$build/"
	find "$build/src" -name '*.o' -o -name '*.bc' -o -name '*.d' | xargs -r rm -f
	if ! $sudo make -C "$build" --no-print-directory -s -j"$(nproc)" install \
		PG_CONFIG="$PG_CONFIG" FLUSSO_TEST_HOOKS=1 >"$build/build.log" 2>&1 ||
		grep -q 'warning:' "$build/build.log"; then
		cat "$build/build.log"
		echo "check.sh: the build against PostgreSQL $major failed or warned"
		failures+=("PostgreSQL $major: the build failed or warned (its log is above)")
		return 1
	fi
}

# suite MAJOR TAPFILES...: pg_regress and the TAP files named (all if none,
# no TAP file if the only one is "none") against the server use_pg_config
# chose; with tap_only set, the TAP files alone, labelled so (an
# OpenSearch or Elasticsearch line)
suite() {
	local major=$1 work perl_lib
	shift
	work=$(mktemp -d --tmpdir --suffix=.flusso-test-$major)
	work_dirs+=("$work")
	cp -r --preserve=timestamps "$FLUSSO_ROOT/sql" "$FLUSSO_ROOT/expected" "$FLUSSO_ROOT/test" "$work/"
	# the manual, for 040_manual.pl: what it names and what its links reach
	cp -r --preserve=timestamps "$FLUSSO_ROOT/README.md" "$FLUSSO_ROOT/LICENSE" "$FLUSSO_ROOT/docs" "$work/"
	mkdir -p "$work/src" && cp --preserve=timestamps "$FLUSSO_ROOT/src/README.md" "$work/src/"
	bash "$FLUSSO_ROOT/test/cluster_conf.sh" "$PG_BINDIR" >"$work/test/cluster.conf"
	[ "$(id -u)" -eq 0 ] && chown -R "$CLUSTER_USER": "$work"
	echo "check.sh: PostgreSQL $("$PG_CONFIG" --version | cut -d' ' -f2), working in $work"

	# pg_regress runs in the copy: 15 takes the expected outputs from the
	# output directory's expected/, 16 and later from the working
	# directory's (--expecteddir, which 15 lacks, defaults to ".")
	[ -z "${tap_only:-}" ] && echo "== pg_regress ($major)"
	if [ -z "${tap_only:-}" ] && ! (cd "$work" && as_cluster_user env PATH="$PG_BINDIR:$PATH" \
		"$PGXS_DIR/src/test/regress/pg_regress" \
		--bindir="$PG_BINDIR" --inputdir="$work/test" --outputdir="$work" \
		--temp-instance="$work/tmp_regress" --temp-config="$work/test/cluster.conf" \
		--dbname=contrib_regression --encoding=UTF8 "${regress[@]}"); then
		[ -f "$work/regression.diffs" ] && cat "$work/regression.diffs"
		failures+=("PostgreSQL $major, pg_regress: see regression.diffs above")
		status=1
	fi

	[ "$*" = none ] && return
	echo "== TAP ($major${tap_only:+, $tap_only})"
	# the TAP modules of the server's PGXS (Debian's 15 and 17 ship them);
	# the wheels have none: 18's from its release's source, and 16 runs
	# with those too, since upstream keeps each release's modules able to
	# drive older servers (PostgreSQL::Test::Cluster's $min_compat is 12)
	perl_lib=$PGXS_DIR/src/test/perl
	case $major in
		16 | 18) perl_lib=$PG18_ROOT/perl ;;
	esac
	# 046_subscriber's publisher, which needs no flusso: 18 beside 15, 15
	# beside 18 (each as installed here), else the server's own version
	local publisher_install=""
	case $major in
		15) [ -x "$PG18_CONFIG" ] && publisher_install=$(dirname "$(dirname "$PG18_CONFIG")") ;;
		18) publisher_install=$("$pg15_config" --bindir 2>/dev/null | xargs -r dirname) ;;
	esac
	local files=()
	if [ $# -eq 0 ]; then
		files=(test/t/*.pl)
	else
		for t in "$@"; do files+=("test/t/$t.pl"); done
	fi
	# TESTDATADIR, TESTLOGDIR: from 16 on, PostgreSQL::Test::Utils puts its
	# data and logs there, or else in relative folders
	if ! (cd "$work" && as_cluster_user env PATH="$PG_BINDIR:$PATH" \
		PERL5LIB="$perl_lib:$work/test" \
		PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
		TESTDIR="$work" TESTDATADIR="$work/tmp_check" TESTLOGDIR="$work/tmp_check/log" \
		FLUSSO_TEST_DIR="$work/test" FLUSSO_REQUIRE_OPENSEARCH=1 \
		FLUSSO_PUBLISHER_INSTALL="$publisher_install" \
		prove --timer "${files[@]}") 2>&1 | tee "$work/prove.out"; then
		report_tap_failures "$major" "$work"
		status=1
	fi
}

# report_tap_failures MAJOR WORK: the logs of the TAP files prove failed,
# whole enough to read, and for the summary printed last, each failed
# check with what it got and expected
report_tap_failures() {
	local major=$1 work=$2 name failed
	failed=$(sed -n 's|^test/t/\([0-9a-z_]*\)\.pl .*(Wstat.*|\1|p' "$work/prove.out" | sort -u)
	[ -n "$failed" ] || failed=$(grep -o 'test/t/[0-9a-z_]*\.pl' "$work/prove.out" | tail -n 1 | sed 's|test/t/||; s|\.pl||')
	for name in $failed; do
		for log in "$work"/tmp_check/log/*"$name"*; do
			[ -f "$log" ] && { echo "--- $log (tail)"; tail -n 60 "$log"; }
		done
		failures+=("PostgreSQL $major${tap_only:+ ($tap_only)}, $name.pl:")
		while IFS= read -r line; do
			failures+=("  $line")
		done < <(sed 's/^\[[0-9:.]*\]([0-9.]*s) //' "$work/tmp_check/log/regress_log_$name" 2>/dev/null |
			grep -A4 -E '^not ok|^# +Failed test|^# Looks like|^# poll_query_until timed out| at [^ ]+ line [0-9]+\.$' |
			grep -v '^--$' | head -n 24)
	done
}

regress=("$@")
for version in $versions; do
	case $version in
		15)
			use_pg_config "$pg15_config"
			# shellcheck disable=SC2086
			suite 15 $tap_15

			# What packagers run: make installcheck (REGRESS against a
			# running server configured as test/cluster_conf.sh prints, then
			# the TAP tests through PGXS's prove_installcheck, one of them
			# here), from a copy of the tree as the cluster's user, without
			# apt-get or sudo.
			if [ "$tap_15" != none ]; then
				echo "== make installcheck, against a running server (15)"
				pkg=$(mktemp -d --tmpdir --suffix=.flusso-installcheck)
				work_dirs+=("$pkg")
				mkdir -p "$pkg/tree"
				cp -r --preserve=timestamps "$FLUSSO_ROOT/Makefile" "$FLUSSO_ROOT/flusso.control" \
					"$FLUSSO_ROOT/sql" "$FLUSSO_ROOT/expected" "$FLUSSO_ROOT/test" "$pkg/tree/"
				rm -rf "$pkg/tree/test/opensearch/target"
				[ "$(id -u)" -eq 0 ] && chown -R "$CLUSTER_USER": "$pkg"
				start_cluster "$pkg" 5496
				if ! (cd "$pkg/tree" && as_cluster_user env PGHOST="$pkg" PGPORT=5496 PGUSER=postgres \
					make --no-print-directory installcheck PG_CONFIG="$PG_CONFIG" \
					PROVE_TESTS=test/t/001_extension.pl); then
					[ -f "$pkg/tree/regression.diffs" ] && cat "$pkg/tree/regression.diffs"
					failures+=("PostgreSQL 15, make installcheck: see its output above")
					status=1
				fi
				as_cluster_user "$PG_BINDIR/pg_ctl" -D "$pkg/data" -m fast -w stop >/dev/null
			fi

			# OpenSearch 3.x, Elasticsearch 8.x and 9.x, in the order
			# FLUSSO_OPENSEARCH_LINES names them (see opensearch_lines above)
			for line in $opensearch_lines; do
				case $line in
					3) tap_only="OpenSearch 3.x" line_tap=$tap_opensearch3 ;;
					es8) tap_only="Elasticsearch 8.x" line_tap=$tap_es8 ;;
					es9) tap_only="Elasticsearch 9.x" line_tap=$tap_es9 ;;
					*) continue ;;
				esac
				export FLUSSO_OPENSEARCH_LINE=$line
				# shellcheck disable=SC2086
				suite 15 $line_tap
				unset FLUSSO_OPENSEARCH_LINE tap_only line_tap
			done
			;;
		16)
			if [ ! -x "$PG16_CONFIG" ]; then
				echo "check.sh: PostgreSQL 16 is not installed in $PG16_ROOT (run test/deps.sh)"
				status=1
				continue
			fi
			use_pg_config "$PG16_CONFIG"
			scratch_build 16 || { status=1; continue; }
			# shellcheck disable=SC2086
			suite 16 $tap_16
			;;
		17)
			if [ -n "$in_root" ]; then
				use_pg_config "$PG17_CONFIG"
				scratch_build 17 || { status=1; continue; }
				# shellcheck disable=SC2086
				suite 17 $tap_17
				continue
			fi
			if [ ! -x "$PG17_ROOT$PG17_CONFIG" ]; then
				echo "check.sh: PostgreSQL 17 is not installed in $PG17_ROOT (run test/deps.sh)"
				status=1
				continue
			fi
			# Debian 13's packages run on Debian 13's C library: this leg
			# runs in the Debian 13 root, as check.sh again for 17 alone,
			# reading the tree (mounted read-only at the same path) and
			# working in a folder of the host's mounted at the same path
			# (its folders are kept or removed like the others).  The
			# OpenSearch node runs on the host's JDKs, mounted in at the
			# same paths with the configuration Debian's keep in /etc
			# (their conf files are links there), so that node.sh picks
			# the same one as outside for the line FLUSSO_OPENSEARCH_LINE
			# names: a Debian 13 JRE would add 200 MB to the root and
			# start each node a second slower (no use of the node's CDS
			# archive, which the host's JDK made).
			echo "== PostgreSQL 17, in the Debian 13 root $PG17_ROOT"
			leg=$(mktemp -d --tmpdir --suffix=.flusso-17)
			work_dirs+=("$leg")
			# (it is the leg's TMPDIR: the root's postgres account, which
			# pg_regress and the TAP tests run as, makes its folders there)
			chmod 1777 "$leg"
			mounts=(--bind-ro "$FLUSSO_ROOT" --bind "$leg")
			java_env=()
			[ -d /usr/lib/jvm ] && mounts+=(--bind-ro /usr/lib/jvm)
			for conf in /etc/java-*; do
				[ -d "$conf" ] && mounts+=(--bind-ro "$conf")
			done
			if java=$(command -v java); then
				java_home=$(dirname "$(dirname "$(readlink -f "$java")")")
				[[ $java_home == /usr/lib/jvm/* ]] || mounts+=(--bind-ro "$java_home")
				java_env+=(PATH="$java_home/bin:/usr/sbin:/usr/bin:/sbin:/bin")
			fi
			if [ -n "${JAVA_HOME:-}" ]; then
				[[ $(readlink -f "$JAVA_HOME") == /usr/lib/jvm/* ]] || mounts+=(--bind-ro "$JAVA_HOME")
				java_env+=(JAVA_HOME="$JAVA_HOME")
			fi
			[ -n "${FLUSSO_OPENSEARCH_LINE:-}" ] && java_env+=(FLUSSO_OPENSEARCH_LINE="$FLUSSO_OPENSEARCH_LINE")
			if ! $sudo bash "$FLUSSO_ROOT/test/in_root.sh" "$PG17_ROOT" "${mounts[@]}" \
				env FLUSSO_CHECK_IN_ROOT=1 FLUSSO_PG_VERSIONS=17 FLUSSO_TAP_17="$tap_17" \
				TMPDIR="$leg" PG_CONFIG="$PG17_CONFIG" "${java_env[@]}" \
				bash "$FLUSSO_ROOT/test/check.sh" "${regress[@]}"; then
				status=1
				# what failed in there, for the summary below
				if [ -s "$leg/failures" ]; then
					mapfile -t -O ${#failures[@]} failures <"$leg/failures"
				else
					failures+=("PostgreSQL 17: check.sh failed in $PG17_ROOT (its output is above)")
				fi
			fi
			;;
		18)
			if [ ! -x "$PG18_CONFIG" ]; then
				echo "check.sh: PostgreSQL 18 is not installed in $PG18_ROOT (run test/deps.sh)"
				status=1
				continue
			fi
			use_pg_config "$PG18_CONFIG"
			scratch_build 18 || { status=1; continue; }
			# shellcheck disable=SC2086
			suite 18 $tap_18
			;;
		*)
			echo "check.sh: no test run for PostgreSQL $version"
			status=1
			;;
	esac
done

# in the root, the check.sh outside reports, and keeps or removes the
# folder TMPDIR names, where all of this leg's are
if [ -n "$in_root" ]; then
	[ ${#failures[@]} -gt 0 ] && printf '%s\n' "${failures[@]}" >"$TMPDIR/failures"
	exit $status
fi

if [ $status -eq 0 ]; then
	rm -rf "${work_dirs[@]}"
	echo "check.sh: all tests passed"
else
	echo "check.sh: FAILED (outputs kept in ${work_dirs[*]})"
	[ ${#failures[@]} -gt 0 ] && printf '%s\n' "== what failed" "${failures[@]}"
fi
exit $status

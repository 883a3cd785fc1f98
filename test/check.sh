#!/usr/bin/env bash
#
# check.sh: flusso's test suite, on PostgreSQL 15 (Debian's, installed by
# `make build-install`) and then 18 (test/deps.sh's, which this builds and
# installs into from a scratch copy of the tree).  On each: pg_regress on a
# temporary instance for the regression tests named on the command line,
# then TAP tests, as an unprivileged OS user, from a scratch copy of the
# tests that user owns.  15 runs every TAP file and the packagers' `make
# installcheck`; 18 runs the TAP files that exercise what differs between
# versions (FLUSSO_TAP_18 below).  Exits non-zero if anything failed.
#
# FLUSSO_PG_VERSIONS="15" (or "18") runs one version only.
#
set -uo pipefail
source "$(dirname "$0")/common.sh"

versions=${FLUSSO_PG_VERSIONS:-15 18}
# the worker, documents, seed, coverage, upgrade, OpenSearch and failover
# tests: slots, decoding, the catalog, bgworkers and HA are what versions change
tap_18=${FLUSSO_TAP_18:-"003_worker 004_documents 006_seed 008_coverage 010_upgrade 011_opensearch 025_failover"}
pg15_config=$PG_CONFIG

# the embedded OpenSearch node the TAP tests ship to (a no-op once built);
# copied with its timestamps, so that the copy is seen as built too
bash "$FLUSSO_ROOT/test/opensearch/node.sh" build || exit 1

# with no names given, every regression test that has an expected output
if [ $# -eq 0 ]; then
	for f in "$FLUSSO_ROOT"/test/expected/*.out; do
		# (name_1.out is another expected output of name)
		[[ $f =~ _[0-9]\.out$ ]] && continue
		set -- "$@" "$(basename "$f" .out)"
	done
fi

status=0
work_dirs=()
failures=()

echo "== layout"
bash "$FLUSSO_ROOT/test/layout.sh" "$FLUSSO_ROOT/src" || status=1
echo "== packaging"
bash "$FLUSSO_ROOT/test/packaging.sh" || status=1

# suite MAJOR TAPFILES...: pg_regress and the TAP files named (all if none)
# against the server use_pg_config chose
suite() {
	local major=$1 work perl_lib
	shift
	work=$(mktemp -d --tmpdir --suffix=.flusso-test-$major)
	work_dirs+=("$work")
	cp -r --preserve=timestamps "$FLUSSO_ROOT/sql" "$FLUSSO_ROOT/test" "$work/"
	bash "$FLUSSO_ROOT/test/cluster_conf.sh" "$PG_BINDIR" >"$work/test/cluster.conf"
	[ "$(id -u)" -eq 0 ] && chown -R "$CLUSTER_USER": "$work"
	echo "check.sh: PostgreSQL $("$PG_CONFIG" --version | cut -d' ' -f2), working in $work"

	echo "== pg_regress ($major)"
	if ! as_cluster_user env PATH="$PG_BINDIR:$PATH" \
		"$PGXS_DIR/src/test/regress/pg_regress" \
		--bindir="$PG_BINDIR" --inputdir="$work/test" --outputdir="$work" \
		--temp-instance="$work/tmp_regress" --temp-config="$work/test/cluster.conf" \
		--dbname=contrib_regression "${regress[@]}"; then
		[ -f "$work/regression.diffs" ] && cat "$work/regression.diffs"
		failures+=("PostgreSQL $major, pg_regress: see regression.diffs above")
		status=1
	fi

	echo "== TAP ($major)"
	perl_lib=$PGXS_DIR/src/test/perl
	[ "$major" = 18 ] && perl_lib=$PG18_ROOT/perl
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
		failures+=("PostgreSQL $major, $name.pl:")
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
			suite 15

			# What packagers run: make installcheck (REGRESS against a
			# running server configured as test/cluster_conf.sh prints, then
			# the TAP tests through PGXS's prove_installcheck, one of them
			# here), from a copy of the tree as the cluster's user, without
			# apt-get or sudo.
			echo "== make installcheck, against a running server (15)"
			pkg=$(mktemp -d --tmpdir --suffix=.flusso-installcheck)
			work_dirs+=("$pkg")
			mkdir -p "$pkg/tree"
			cp -r --preserve=timestamps "$FLUSSO_ROOT/Makefile" "$FLUSSO_ROOT/flusso.control" \
				"$FLUSSO_ROOT/sql" "$FLUSSO_ROOT/test" "$pkg/tree/"
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
			;;
		18)
			if [ ! -x "$PG18_CONFIG" ]; then
				echo "check.sh: PostgreSQL 18 is not installed in $PG18_ROOT (run test/deps.sh)"
				status=1
				continue
			fi
			use_pg_config "$PG18_CONFIG"
			# built from a scratch copy, so that the 15 build's objects stay
			echo "== build and install (18)"
			build=$(mktemp -d --tmpdir --suffix=.flusso-build-18)
			work_dirs+=("$build")
			cp -r --preserve=timestamps "$FLUSSO_ROOT/Makefile" "$FLUSSO_ROOT/flusso.control" \
				"$FLUSSO_ROOT/flusso.map" "$FLUSSO_ROOT/src" "$FLUSSO_ROOT/sql" "$build/"
			find "$build/src" -name '*.o' -o -name '*.bc' -o -name '*.d' | xargs -r rm -f
			sudo=""
			[ "$(id -u)" -ne 0 ] && sudo=sudo
			if ! $sudo make -C "$build" --no-print-directory -s -j"$(nproc)" install \
				PG_CONFIG="$PG_CONFIG" FLUSSO_TEST_HOOKS=1 >"$build/build.log" 2>&1 ||
				grep -q 'warning:' "$build/build.log"; then
				cat "$build/build.log"
				echo "check.sh: the build against PostgreSQL 18 failed or warned"
				status=1
				continue
			fi
			# shellcheck disable=SC2086
			suite 18 $tap_18
			;;
		*)
			echo "check.sh: no test run for PostgreSQL $version"
			status=1
			;;
	esac
done

if [ $status -eq 0 ]; then
	rm -rf "${work_dirs[@]}"
	echo "check.sh: all tests passed"
else
	echo "check.sh: FAILED (outputs kept in ${work_dirs[*]})"
	[ ${#failures[@]} -gt 0 ] && printf '%s\n' "== what failed" "${failures[@]}"
fi
exit $status

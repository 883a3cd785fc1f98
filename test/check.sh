#!/usr/bin/env bash
#
# check.sh: flusso's test suite.  Runs pg_regress on a temporary instance
# for the regression tests named on the command line, then every TAP test
# under test/t/, as an unprivileged OS user, from a scratch copy of the
# tests that user owns.  Exits non-zero if anything failed.
#
set -uo pipefail
source "$(dirname "$0")/common.sh"

# the embedded OpenSearch node the TAP tests ship to (a no-op once built);
# copied with its timestamps, so that the copy is seen as built too
bash "$FLUSSO_ROOT/test/opensearch/node.sh" build || exit 1

work=$(mktemp -d --tmpdir --suffix=.flusso-test)
cp -r --preserve=timestamps "$FLUSSO_ROOT/sql" "$FLUSSO_ROOT/expected" "$FLUSSO_ROOT/test" "$work/"
bash "$FLUSSO_ROOT/test/cluster_conf.sh" "$PG_BINDIR" >"$work/test/cluster.conf"
[ "$(id -u)" -eq 0 ] && chown -R postgres: "$work"
echo "check.sh: working in $work"

# with no names given, every regression test that has an expected output
if [ $# -eq 0 ]; then
	for f in "$FLUSSO_ROOT"/expected/*.out; do
		set -- "$@" "$(basename "$f" .out)"
	done
fi

status=0

echo "== layout"
bash "$FLUSSO_ROOT/test/layout.sh" "$FLUSSO_ROOT/src" || status=1
echo "== packaging"
bash "$FLUSSO_ROOT/test/packaging.sh" || status=1

echo "== pg_regress"
if ! as_cluster_user env PATH="$PG_BINDIR:$PATH" \
	"$PGXS_DIR/src/test/regress/pg_regress" \
	--bindir="$PG_BINDIR" --inputdir="$work" --outputdir="$work" \
	--temp-instance="$work/tmp_regress" --temp-config="$work/test/cluster.conf" \
	--dbname=contrib_regression "$@"; then
	[ -f "$work/regression.diffs" ] && cat "$work/regression.diffs"
	status=1
fi

echo "== TAP"
if ! (cd "$work" && as_cluster_user env PATH="$PG_BINDIR:$PATH" \
	PERL5LIB="$PGXS_DIR/src/test/perl:$work/test" \
	PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
	TESTDIR="$work" FLUSSO_TEST_DIR="$work/test" FLUSSO_REQUIRE_OPENSEARCH=1 \
	prove --timer test/t/*.pl); then
	for log in "$work"/tmp_check/log/*.log; do
		[ -f "$log" ] && { echo "--- $log (tail)"; tail -n 40 "$log"; }
	done
	status=1
fi

# What packagers run: make installcheck (REGRESS against a running server
# configured as test/cluster_conf.sh prints, then the TAP tests through PGXS's
# prove_installcheck, one of them here), from a copy of the tree as the
# cluster's user, without apt-get or sudo.
echo "== make installcheck, against a running server"
pkg="$work/installcheck"
mkdir -p "$pkg/tree"
cp -r --preserve=timestamps "$FLUSSO_ROOT/Makefile" "$FLUSSO_ROOT/flusso.control" \
	"$FLUSSO_ROOT/sql" "$FLUSSO_ROOT/expected" "$FLUSSO_ROOT/test" "$pkg/tree/"
rm -rf "$pkg/tree/test/opensearch/target"
[ "$(id -u)" -eq 0 ] && chown -R "$CLUSTER_USER": "$pkg"
start_cluster "$pkg" 5496
if ! (cd "$pkg/tree" && as_cluster_user env PGHOST="$pkg" PGPORT=5496 PGUSER=postgres \
	make --no-print-directory installcheck PROVE_TESTS=test/t/001_extension.pl); then
	[ -f "$pkg/tree/regression.diffs" ] && cat "$pkg/tree/regression.diffs"
	status=1
fi
as_cluster_user "$PG_BINDIR/pg_ctl" -D "$pkg/data" -m fast -w stop >/dev/null

if [ $status -eq 0 ]; then
	rm -rf "$work"
	echo "check.sh: all tests passed"
else
	echo "check.sh: FAILED (outputs kept in $work)"
fi
exit $status

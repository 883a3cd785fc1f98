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

echo "== pg_regress"
if ! as_cluster_user env PATH="$PG_BINDIR:$PATH" \
	"$PGXS_DIR/src/test/regress/pg_regress" \
	--bindir="$PG_BINDIR" --inputdir="$work" --outputdir="$work" \
	--temp-instance="$work/tmp_regress" --temp-config="$work/test/flusso.conf" \
	--dbname=contrib_regression "$@"; then
	[ -f "$work/regression.diffs" ] && cat "$work/regression.diffs"
	status=1
fi

echo "== TAP"
if ! (cd "$work" && as_cluster_user env PATH="$PG_BINDIR:$PATH" \
	PERL5LIB="$PGXS_DIR/src/test/perl:$work/test" \
	PG_REGRESS="$PGXS_DIR/src/test/regress/pg_regress" \
	TESTDIR="$work" FLUSSO_TEST_DIR="$work/test" \
	prove --timer test/t/*.pl); then
	for log in "$work"/tmp_check/log/*.log; do
		[ -f "$log" ] && { echo "--- $log (tail)"; tail -n 40 "$log"; }
	done
	status=1
fi

if [ $status -eq 0 ]; then
	rm -rf "$work"
	echo "check.sh: all tests passed"
else
	echo "check.sh: FAILED (outputs kept in $work)"
fi
exit $status

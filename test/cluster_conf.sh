#!/usr/bin/env bash
#
# cluster_conf.sh BINDIR: print the settings a test or demo cluster runs
# with: test/flusso.conf, plus output_plugin_libraries listing flusso when
# the server in BINDIR has that setting (the minors released from
# 2026-08-13 on; older ones refuse to start with it).
#
set -euo pipefail
bindir=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

cat "$here/flusso.conf"
# postgres refuses to run as root, even to describe its settings
describe=("$bindir/postgres" --describe-config)
[ "$(id -u)" -eq 0 ] && describe=(runuser -u postgres -- "${describe[@]}")
# (read whole first: grep -q ending the pipe early would fail it under pipefail)
settings=$("${describe[@]}" 2>/dev/null | cut -f1)
if grep -qx output_plugin_libraries <<<"$settings"; then
	echo "output_plugin_libraries = 'pgoutput, test_decoding, flusso'"
fi

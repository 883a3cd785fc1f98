#!/usr/bin/env bash
#
# run.sh: build the schema parser fuzzer with clang (libFuzzer, ASan, UBSan)
# and run it for the given number of seconds (default 600) on a corpus
# seeded from the test fixtures.  Not part of the test suite.
#
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-600}
root=$(cd ../.. && pwd)

if ! command -v clang >/dev/null || ! dpkg-query -W libclang-rt-14-dev >/dev/null 2>&1; then
	sudo=""
	[ "$(id -u)" -ne 0 ] && sudo=sudo
	$sudo apt-get install -y -qq clang libclang-rt-14-dev
fi
bash "$root/test/deps.sh"

source "$root/test/common.sh"
incdir=$("$PG_CONFIG" --includedir-server)
libdir=$("$PG_CONFIG" --pkglibdir)

clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Wno-ignored-attributes \
	-DFRONTEND -I"$root/src" -I"$incdir" -I"$("$PG_CONFIG" --includedir)/internal" \
	schema_fuzz.c "$root"/src/schema/*.c \
	"$libdir/libpgcommon.a" "$libdir/libpgport.a" -lyaml -lm \
	-Wl,--allow-multiple-definition -o schema_fuzz

mkdir -p corpus
cp "$root"/test/fixtures/*.schema.* corpus/
./schema_fuzz -max_total_time="$seconds" -max_len=8192 -timeout=10 -dict=schema.dict \
	-print_final_stats=1 corpus/

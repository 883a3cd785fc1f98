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
	prometheus-postgres-exporter)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
echo "deps.sh: installing ${missing[*]}"
$sudo apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"

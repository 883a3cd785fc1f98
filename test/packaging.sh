#!/usr/bin/env bash
#
# packaging.sh: what a packager relies on stays consistent.  META.json
# parses and names the version flusso.control installs by default; the
# Makefile installs every script in sql/ named flusso--*.sql, and those
# scripts lead from the released 0.1.0 to that version.
#
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

python3 - "$root" <<'PY'
import json, os, re, sys

root = sys.argv[1]
errors = []

control = open(os.path.join(root, "flusso.control")).read()
default = re.search(r"^default_version\s*=\s*'([^']+)'", control, re.M).group(1)

meta = json.load(open(os.path.join(root, "META.json")))
for where, version in (("version", meta.get("version")),
                       ("provides.flusso.version", meta.get("provides", {}).get("flusso", {}).get("version"))):
    if version != default:
        errors.append(f"META.json {where} is {version!r}, flusso.control installs {default!r}")
for key in ("name", "abstract", "license", "maintainer", "prereqs", "meta-spec"):
    if key not in meta:
        errors.append(f"META.json has no {key}")

makefile = open(os.path.join(root, "Makefile")).read()
data = re.search(r"^DATA\s*=\s*(.*)$", makefile, re.M).group(1).split()
scripts = sorted("sql/" + f for f in os.listdir(os.path.join(root, "sql"))
                 if re.fullmatch(r"flusso--[0-9.]+(--[0-9.]+)?\.sql", f))
if sorted(data) != scripts:
    errors.append(f"the Makefile's DATA {sorted(data)} is not sql/'s scripts {scripts}")

steps = {}
for s in scripts:
    m = re.fullmatch(r"sql/flusso--([0-9.]+)--([0-9.]+)\.sql", s)
    if m:
        steps[m.group(1)] = m.group(2)
version, seen = "0.1.0", set()
while version != default and version in steps and version not in seen:
    seen.add(version)
    version = steps[version]
if version != default:
    errors.append(f"no chain of upgrade scripts leads from 0.1.0 to {default}")

for e in errors:
    print("packaging: " + e)
if errors:
    sys.exit(1)
print(f"packaging: META.json, flusso.control and the scripts agree on {default}")
PY

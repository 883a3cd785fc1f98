# common.sh: sourced by check.sh and demo.sh.  Finds the PostgreSQL install
# and decides which OS user runs clusters: PostgreSQL refuses to run as root,
# so root runs them as "postgres" (created by the server package).

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
[ -x "$PG_CONFIG" ] || PG_CONFIG=$(command -v pg_config)
PG_BINDIR=$("$PG_CONFIG" --bindir)
PGXS_DIR=$(dirname "$(dirname "$(dirname "$("$PG_CONFIG" --pgxs)")")")
FLUSSO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ "$(id -u)" -eq 0 ]; then
	CLUSTER_USER=postgres
	as_cluster_user() { runuser -u postgres -- "$@"; }
else
	CLUSTER_USER=$(id -un)
	as_cluster_user() { "$@"; }
fi

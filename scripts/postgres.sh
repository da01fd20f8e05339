#!/usr/bin/env bash
# A throwaway PostgreSQL for statecraft/dbos and its tests, in a folder of its own on a free port.
#   eval "$(scripts/postgres.sh start [DIR])"   starts it; prints `export STATECRAFT_TEST_DATABASE_URL=…` (and PGSTATECRAFT_DIR)
#   scripts/postgres.sh stop [DIR]             stops it and removes the folder
# Needs PostgreSQL's server binaries (Debian: apt-get install postgresql): initdb and pg_ctl on PATH, or under
# /usr/lib/postgresql/<version>/bin. PostgreSQL refuses to run as root: as root, the server runs as the `postgres`
# user (created by Debian's package) through runuser.
set -euo pipefail

bin_dir() {
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v pg_ctl)"
    return
  fi
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -Vr); do
    if [[ -x "$d/initdb" && -x "$d/pg_ctl" ]]; then echo "$d"; return; fi
  done
  echo "postgres.sh: initdb and pg_ctl not found; install PostgreSQL's server (Debian: apt-get install postgresql)" >&2
  exit 1
}

# Runs a command as the server's user: ourselves, or `postgres` when we are root.
as_owner() {
  if [[ $(id -u) -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || { echo "postgres.sh: running as root needs a 'postgres' user (Debian's postgresql package makes one)" >&2; exit 1; }
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

cmd=${1:-}
dir=${2:-${PGSTATECRAFT_DIR:-}}
case "$cmd" in
  start)
    bin=$(bin_dir)
    [[ -n "$dir" ]] || dir=$(mktemp -d "${TMPDIR:-/tmp}/statecraft-pg-XXXXXX")
    mkdir -p "$dir"
    [[ $(id -u) -eq 0 ]] && chown postgres "$dir"
    port=$(free_port)
    as_owner "$bin/initdb" -D "$dir/data" -U statecraft --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    # Only on 127.0.0.1, sockets in the folder (not /var/run/postgresql, which may not exist or be someone else's).
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 -c fsync=off" start >/dev/null \
      || { cat "$dir/server.log" >&2; exit 1; }
    echo "$port" >"$dir/port"
    echo "export PGSTATECRAFT_DIR=$dir"
    echo "export STATECRAFT_TEST_DATABASE_URL=postgres://statecraft@127.0.0.1:$port/postgres"
    ;;
  stop)
    [[ -n "$dir" ]] || { echo "usage: postgres.sh stop DIR (or set PGSTATECRAFT_DIR)" >&2; exit 2; }
    bin=$(bin_dir)
    if [[ -d "$dir/data" ]]; then as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true; fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: eval \"\$(scripts/postgres.sh start [DIR])\"  |  scripts/postgres.sh stop [DIR]" >&2
    exit 2
    ;;
esac

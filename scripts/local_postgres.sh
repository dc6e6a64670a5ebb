#!/usr/bin/env bash
# A private PostgreSQL 15 cluster on a free loopback port, for the lake store and Dagster's
# instance (docs/scale-out.md). Nothing system-wide is touched: the cluster lives in one folder.
#
#   scripts/local_postgres.sh start [DIR]   init (first time) and start; prints the env lines
#   scripts/local_postgres.sh env [DIR]     print the env lines of a running cluster
#   scripts/local_postgres.sh stop [DIR]    stop it (the data stays in DIR)
#
# DIR defaults to ./.postgres. The env lines set PGHOST, PGPORT, PGUSER and
# INGEST_STORE / INGEST_LAKE_DATA for the lake, and INGEST_PG_* for dagster.postgres.yaml.
# As root the server runs as the user `postgres` (Postgres refuses to run as root).
set -euo pipefail

action=${1:-}
dir=$(realpath -m "${2:-.postgres}")
bin=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin: apt-get install postgresql" >&2
  exit 1
fi

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

print_env() {
  local port user
  port=$(cat "$dir/port")
  user=$(cat "$dir/user")
  cat <<EOF
export PGHOST=127.0.0.1 PGPORT=$port PGUSER=$user
export INGEST_PG_HOST=127.0.0.1 INGEST_PG_PORT=$port INGEST_PG_USER=$user INGEST_PG_DB=dagster
export INGEST_STORE='ducklake:postgres:dbname=lake host=127.0.0.1 port=$port user=$user'
export INGEST_LAKE_DATA=$dir/lake_data
EOF
}

case "$action" in
  start)
    mkdir -p "$dir"
    user=postgres
    [ "$(id -u)" -eq 0 ] || user=$(id -un)
    echo "$user" >"$dir/user"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      mkdir -p "$dir/data" "$dir/sock" "$dir/lake_data"
      [ "$(id -u)" -ne 0 ] || chown -R postgres "$dir"
      as_owner "$bin/initdb" -D "$dir/data" -U "$user" -A trust >"$dir/initdb.log"
    fi
    [ "$(id -u)" -ne 0 ] || chown -R postgres "$dir/lake_data" "$dir/sock"
    # The lake's Parquet files are written by the ingesting user, not by the server.
    [ "$(id -u)" -ne 0 ] || chown -R root "$dir/lake_data"
    if ! as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      port=$(free_port)
      echo "$port" >"$dir/port"
      as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir/sock -c max_connections=200 -c fsync=off" start >/dev/null
      for db in lake dagster; do
        as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$user" "$db" 2>/dev/null || true
      done
    fi
    print_env
    ;;
  env) print_env ;;
  stop)
    if [ -f "$dir/data/PG_VERSION" ]; then
      as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    ;;
  *)
    echo "usage: $0 start|env|stop [DIR]" >&2
    exit 2
    ;;
esac

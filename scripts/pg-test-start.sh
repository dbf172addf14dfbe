#!/usr/bin/env bash
# A throwaway PostgreSQL for the SQL store tests: data and unix socket in a temporary directory,
# TCP on 127.0.0.1:$PGPORT only, durability off (tests only). Prints the two lines to eval:
#   eval "$(scripts/pg-test-start.sh)"   # sets PGTMP and DATABASE_URL
#   scripts/pg-test-stop.sh "$PGTMP"     # stops that server (by its data directory) and removes it
# Run as root (the server then runs as the `postgres` user) or as an unprivileged user.
# Needs Debian's `postgresql` package (apt-get install -y postgresql); `.ci/run` installs it.
set -euo pipefail
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
if [ -z "$PGBIN" ] || [ ! -x "$PGBIN/initdb" ]; then
  echo "pg-test-start: no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install -y postgresql)" >&2
  exit 1
fi
PGPORT=${PGPORT:-55432}
PGTMP=${PGTMP:-$(mktemp -d /tmp/pgtest.XXXXXX)}
as_pg() { if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$PGTMP"; fi
as_pg "$PGBIN/initdb" -D "$PGTMP/data" -U postgres -A trust -E UTF8 --no-locale --no-sync >"$PGTMP/initdb.log"
as_pg "$PGBIN/pg_ctl" -D "$PGTMP/data" -l "$PGTMP/pg.log" -w -t 20 \
  -o "-k $PGTMP -p $PGPORT -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
  start >/dev/null
as_pg "$PGBIN/createdb" -h "$PGTMP" -p "$PGPORT" -U postgres agentkit
echo "export PGTMP=$PGTMP"
echo "export DATABASE_URL=postgres://postgres@127.0.0.1:$PGPORT/agentkit"

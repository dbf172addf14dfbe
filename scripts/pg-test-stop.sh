#!/usr/bin/env bash
# Stops the throwaway PostgreSQL that scripts/pg-test-start.sh started, by its data directory
# (pg_ctl signals the postmaster whose PID is in $PGTMP/data/postmaster.pid), and removes the
# directory. Usage: scripts/pg-test-stop.sh [PGTMP] (default: $PGTMP). Never touches any other server.
set -euo pipefail
dir=${1:-${PGTMP:-}}
case "$dir" in
  /tmp/pgtest.*) ;;
  *) echo "pg-test-stop: expected the directory pg-test-start.sh made (/tmp/pgtest.*); got '${dir}'" >&2; exit 2 ;;
esac
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
as_pg() { if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
if [ -f "$dir/data/postmaster.pid" ]; then
  as_pg "$PGBIN/pg_ctl" -D "$dir/data" -m immediate -w -t 20 stop >/dev/null || true
fi
rm -rf "$dir"

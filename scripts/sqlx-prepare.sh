#!/usr/bin/env bash
# Records the schema every compile-time checked statement (`sqlx::query!`,
# `query_as!`, `query_scalar!`) is checked against into `.sqlx/`, which is
# committed: builds then need no database (`.cargo/config.toml` sets
# SQLX_OFFLINE). Run it after changing a statement or adding a migration.
#
# It needs PostgreSQL's server binaries (as the service does without
# DATABASE_URL): a throwaway cluster is made, migrated by `atelier migrate`,
# and every target is checked against it while the macros write their data.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || bin=$(dirname "$(command -v postgres)")
dir=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
run_as=()
if [ "$(id -u)" = 0 ]; then
  chown postgres "$dir"
  run_as=(runuser -u postgres --)
fi
stop() { "${run_as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap stop EXIT
"${run_as[@]}" "$bin/initdb" -D "$dir/data" -A trust -U postgres >/dev/null
"${run_as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1" start >/dev/null
"${run_as[@]}" "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres atelier

url="postgres://postgres@127.0.0.1:$port/atelier"
# The schema from the migrations themselves, in order (the macros need the
# tables, not sqlx's bookkeeping; the service applies them as usual).
for m in migrations/*.sql; do
  "${run_as[@]}" "$bin/psql" -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d atelier -f "$m" >/dev/null
done
rm -rf .sqlx && mkdir .sqlx
# Every target, so statements in tests and benches are recorded too; `touch`
# makes cargo expand the macros again.
touch src/lib.rs
DATABASE_URL="$url" SQLX_OFFLINE=false SQLX_OFFLINE_DIR="$PWD/.sqlx" cargo check --quiet --all-targets
echo "recorded $(ls .sqlx | wc -l) statements in .sqlx/"

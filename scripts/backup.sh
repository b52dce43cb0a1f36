#!/usr/bin/env bash
# Backup and restore of a paygate store, online and consistent (docs/production.md, "Backup and
# restore"). It reads the same environment as the gateway: DATABASE_URL for PostgreSQL, else the
# embedded SQLite store in PAYGATE_DATA_DIR (./data by default).
#
#   scripts/backup.sh backup FILE     a consistent copy of the store while the gateway runs
#   scripts/backup.sh restore FILE    into an empty store (a new data folder, an empty database)
#
# SQLite: `VACUUM INTO` through better-sqlite3 (the gateway's own driver, from this install): one
# read transaction, so the copy is the database as of one instant, written as one compact file,
# while the gateway goes on writing (WAL). Never copy paygate.sqlite with cp: the last commits
# live in paygate.sqlite-wal until a checkpoint, and a file copied mid-write is torn. The copy is
# checked with PRAGMA integrity_check. PostgreSQL: pg_dump --format=custom (one snapshot in a
# repeatable-read transaction), restored with pg_restore in one transaction.
#
# Neither holds the master key: what is sealed in the backup (merchants' secrets, processors'
# credentials, vaulted cards) opens only with the key it was sealed with. Keep the key apart.
# test/api/backup-restore.test.ts backs up under load, restores and checks every sale.
set -euo pipefail
umask 077
here="$(cd "$(dirname "$0")/.." && pwd)"

die() {
  echo "backup.sh: $*" >&2
  exit 1
}
usage() {
  echo "usage: scripts/backup.sh backup FILE | restore FILE   (DATABASE_URL, or PAYGATE_DATA_DIR for SQLite)" >&2
  exit 2
}

[ $# -eq 2 ] || usage
command="$1"
file="$(realpath -m -- "$2")"

# The SQLite work, in the gateway's own driver: VACUUM INTO, then the copy's integrity check.
sqlite_js='
const [root, action, source, target] = process.argv.slice(1);
const Database = require(require.resolve("better-sqlite3", { paths: [root] }));
const check = (path) => {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const result = db.pragma("integrity_check", { simple: true });
    if (result !== "ok") throw new Error(`${path} fails its integrity check: ${result}`);
    return db.prepare("SELECT count(*) AS n FROM transactions").get().n;
  } finally {
    db.close();
  }
};
if (action === "backup") {
  const db = new Database(source, { readonly: true, fileMustExist: true });
  db.pragma("busy_timeout = 10000");
  db.prepare("VACUUM INTO ?").run(target);
  db.close();
}
console.log(String(check(action === "backup" ? target : source)));
'

if [ -n "${DATABASE_URL:-}" ]; then
  command -v pg_dump >/dev/null && command -v pg_restore >/dev/null && command -v psql >/dev/null ||
    die "pg_dump, pg_restore and psql are needed (Debian: apt-get install postgresql-client, the server's major version or newer)"
  case "$command" in
  backup)
    [ ! -e "$file" ] || die "$file exists: a backup never overwrites one"
    pg_dump --format=custom --file="$file.partial" --dbname="$DATABASE_URL"
    mv -- "$file.partial" "$file"
    echo "backup.sh: PostgreSQL backup written to $file ($(pg_restore --list "$file" | grep -c 'TABLE DATA') tables)"
    ;;
  restore)
    [ -f "$file" ] || die "no backup at $file"
    tables="$(psql --no-psqlrc --tuples-only --no-align --dbname="$DATABASE_URL" \
      --command="SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")"
    [ "$tables" = 0 ] || die "the database of DATABASE_URL has $tables tables: restore into an empty database (createdb a new one)"
    pg_restore --exit-on-error --single-transaction --no-owner --no-privileges --dbname="$DATABASE_URL" "$file"
    echo "backup.sh: restored $file into the database of DATABASE_URL"
    ;;
  *) usage ;;
  esac
  exit 0
fi

data_dir="$(realpath -m -- "${PAYGATE_DATA_DIR:-./data}")"
database="$data_dir/paygate.sqlite"
case "$command" in
backup)
  [ -f "$database" ] || die "no database at $database (set PAYGATE_DATA_DIR, or DATABASE_URL for PostgreSQL)"
  [ ! -e "$file" ] || die "$file exists: a backup never overwrites one"
  mkdir -p -- "$(dirname -- "$file")"
  rows="$(cd "$here" && node -e "$sqlite_js" "$here" backup "$database" "$file.partial")" || {
    rm -f -- "$file.partial"
    die "backup failed"
  }
  mv -- "$file.partial" "$file"
  echo "backup.sh: SQLite backup written to $file ($rows transactions, integrity ok)"
  ;;
restore)
  [ -f "$file" ] || die "no backup at $file"
  [ ! -e "$database" ] || die "$database exists: restore into a new data folder (set PAYGATE_DATA_DIR), never over a live one"
  rows="$(cd "$here" && node -e "$sqlite_js" "$here" restore "$file")" || die "$file is not a sound paygate database"
  mkdir -p -m 700 -- "$data_dir"
  cp -- "$file" "$database.partial"
  mv -- "$database.partial" "$database"
  echo "backup.sh: restored $file into $database ($rows transactions); the gateway needs the master key it was sealed with"
  ;;
*) usage ;;
esac

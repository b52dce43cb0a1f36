#!/bin/bash
# Entrypoint of the PostgreSQL stand-in (postgres.Dockerfile): on an empty data folder, creates
# the cluster with POSTGRES_USER as superuser (password POSTGRES_PASSWORD, md5 over the network)
# and the database POSTGRES_DB, then runs the server in the foreground as the official image does.
set -euo pipefail
: "${POSTGRES_USER:=postgres}" "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" "${POSTGRES_DB:=$POSTGRES_USER}"
mkdir -p "$PGDATA" && chown -R postgres:postgres "$PGDATA" && chmod 0700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp) && printf '%s' "$POSTGRES_PASSWORD" >"$pwfile" && chown postgres "$pwfile"
  su postgres -c "initdb --username='$POSTGRES_USER' --pwfile='$pwfile' --auth-local=trust --auth-host=md5 -D '$PGDATA'" >/dev/null
  rm -f "$pwfile"
  echo "host all all 0.0.0.0/0 md5" >>"$PGDATA/pg_hba.conf"
  su postgres -c "pg_ctl -D '$PGDATA' -o \"-c listen_addresses=''\" -w start" >/dev/null
  if [ "$POSTGRES_DB" != postgres ]; then
    su postgres -c "psql -v ON_ERROR_STOP=1 --username='$POSTGRES_USER' --dbname=postgres -c 'CREATE DATABASE \"$POSTGRES_DB\"'" >/dev/null
  fi
  su postgres -c "pg_ctl -D '$PGDATA' -m fast -w stop" >/dev/null
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" -c listen_addresses='*'

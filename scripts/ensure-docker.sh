#!/usr/bin/env bash
# Makes a Docker engine answer on this machine for the container checks (.ci/run, docs/production.md):
# when `docker info` fails, installs Debian's docker.io, docker-compose and debootstrap if they
# are missing (root with apt-get only) and starts dockerd in the background, logging to
# /tmp/paygate-dockerd.log. Prints the pid of a dockerd it started, nothing when one was running.
set -euo pipefail
docker info >/dev/null 2>&1 && exit 0
if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null \
  || ! { docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null; }; then
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null \
    || { echo "ensure-docker: no Docker engine, and only root with apt-get can install one here" >&2; exit 1; }
  echo "[docker] installing Debian's docker.io, docker-compose and debootstrap" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io docker-compose debootstrap >/dev/null 2>&1 \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io docker-compose debootstrap >/dev/null; }
fi
[ "$(id -u)" = 0 ] || { echo "ensure-docker: dockerd is installed but not running; start it as root" >&2; exit 1; }
setsid dockerd >/tmp/paygate-dockerd.log 2>&1 < /dev/null &
pid=$!
for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
docker info >/dev/null 2>&1 || { tail -20 /tmp/paygate-dockerd.log >&2; echo "ensure-docker: dockerd did not start" >&2; exit 1; }
echo "$pid"

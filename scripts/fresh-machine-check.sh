#!/usr/bin/env bash
# The fresh-machine check of docs/fresh-machine.md: a clean clone of the current commit in a new
# folder, then the README's two commands and nothing else: `npm ci`, `npm test`. No CI=true, no
# environment of ours, no node_modules or data from this checkout. HOME stays the user's: the
# machine's own npm settings (its registry, where Node's headers are for native builds) are part
# of the machine, not of the project. Run it in a clean container
# (Debian 12 with Node.js >= 20.19, PostgreSQL optional) for the strongest form of the check.
#
# --container runs the same check inside a new container of scripts/fresh-machine.Dockerfile
# (Debian 12, Node.js 20, build tools; no Chromium, no PostgreSQL server), so that the test
# command must install Chromium itself. The container shares the host's network, where the
# PostgreSQL half of the suites finds 127.0.0.1:5432 if the host has it. Needs Docker; where Docker
# Hub cannot be reached the base image is a stand-in (scripts/offline-base-images/build.sh).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
if [ "${1:-}" = --container ]; then
  eval "$("$repo/scripts/offline-base-images/build.sh" | grep -E '^NODE_IMAGE=[A-Za-z0-9._/:-]+$')"
  image=paygate-fresh-machine:local
  docker build -q --build-arg "NODE_IMAGE=$NODE_IMAGE" -t "$image" -f "$repo/scripts/fresh-machine.Dockerfile" "$repo/scripts" >/dev/null
  echo "[fresh] clean container $image (from $NODE_IMAGE)"
  # Only the commit is shared with the container, read-only; the check clones it inside.
  clone="$(mktemp -d -t paygate-fresh-src-XXXXXX)"
  trap 'rm -rf "$clone"' EXIT
  git clone --quiet "$repo" "$clone/paygate"
  docker run --rm --network host -v "$clone/paygate:/src:ro" "$image" \
    bash -c 'git config --global --add safe.directory "*" && bash /src/scripts/fresh-machine-check.sh'
  exit
fi
work="$(mktemp -d -t paygate-fresh-XXXXXX)"
trap 'rm -rf "$work"' EXIT
git clone --quiet "$repo" "$work/paygate"
cd "$work/paygate"
echo "[fresh] $(git log -1 --format='%h %s') in $work/paygate"
env -i HOME="$HOME" PATH="$PATH" npm ci --no-audit --no-fund
env -i HOME="$HOME" PATH="$PATH" npm test
echo "[fresh] npm ci and npm test passed on a clean clone"
# A production install of the same clone: the code built by npm ci, dev dependencies removed,
# started by npm start without any compiler (docs/production.md).
env -i HOME="$HOME" PATH="$PATH" npm prune --omit=dev --no-audit --no-fund >/dev/null
test ! -e node_modules/typescript
port=18765
# In a session of its own, so that npm, its script and the gateway all stop together below.
setsid env -i HOME="$HOME" PATH="$PATH" PORT=$port PAYGATE_DATA_DIR="$work/data" npm start >"$work/start.log" 2>&1 &
started=$!
for _ in $(seq 1 60); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.5; done
curl -fsS "http://127.0.0.1:$port/healthz"
echo
kill -- -"$started"; wait "$started" || true
echo "[fresh] production install (npm prune --omit=dev, npm start) serves /healthz"

#!/usr/bin/env bash
# The fresh-machine check of docs/fresh-machine.md: a clean clone of the current commit in a new
# folder, then the README's two commands and nothing else: `npm ci`, `npm test`. No CI=true, no
# environment of ours, no node_modules or data from this checkout. HOME stays the user's: the
# machine's own npm settings (its registry, where Node's headers are for native builds) are part
# of the machine, not of the project. Run it in a clean container
# (Debian 12 with Node.js >= 20.19, PostgreSQL optional) for the strongest form of the check.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
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

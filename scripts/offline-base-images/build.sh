#!/usr/bin/env bash
# Builds stand-ins for the two base images that Dockerfile and compose.yaml name (node:20-bookworm-slim
# and postgres:16-bookworm) on a machine that runs Docker but cannot reach Docker Hub, from Debian's
# own packages (debootstrap) and this machine's Node.js. Prints the two image names to use, as
# NODE_IMAGE=… and POSTGRES_IMAGE=… lines; where the official images can be pulled it builds
# nothing and prints those. Used by scripts/compose-check.sh and scripts/fresh-machine-check.sh
# --container; docs/production.md says how the stand-ins differ from the official images.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
official_node=node:20-bookworm-slim
official_postgres=postgres:16-bookworm
have_or_pull() { docker image inspect "$1" >/dev/null 2>&1 || timeout 60 docker pull -q "$1" >/dev/null 2>&1; }
if have_or_pull "$official_node" && have_or_pull "$official_postgres"; then
  echo "NODE_IMAGE=$official_node"
  echo "POSTGRES_IMAGE=$official_postgres"
  exit 0
fi
debian=paygate-standin/debian:bookworm
# Tagged with a digest of the files that make them, so a change to those files builds them anew.
recipe="$(cat "$here/node.Dockerfile" "$here/postgres.Dockerfile" "$here/postgres-entrypoint.sh" | sha256sum | cut -c1-12)"
node_image="paygate-standin/node:20-bookworm-$recipe"
postgres_image="paygate-standin/postgres:15-bookworm-$recipe"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
work="$(mktemp -d -t paygate-standin-XXXXXX)"
trap 'rm -rf "$work"' EXIT
if ! docker image inspect "$debian" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null || { echo "build.sh: needs debootstrap (apt-get install -y debootstrap)" >&2; exit 1; }
  echo "[standin] debootstrap Debian 12 from $mirror" >&2
  debootstrap --variant=minbase --include=ca-certificates bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  tar -C "$work/rootfs" -c . | docker import - "$debian" >/dev/null
  rm -rf "$work/rootfs"
fi
if ! docker image inspect "$node_image" >/dev/null 2>&1; then
  node_bin="$(command -v node)"; prefix="$(dirname "$(dirname "$(readlink -f "$node_bin")")")"
  npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
  [ -d "$prefix/include/node" ] || { echo "build.sh: Node's headers not found under $prefix/include/node" >&2; exit 1; }
  major="$(node -p 'process.versions.node.split(".")[0]')"
  [ "$major" = 20 ] || { echo "build.sh: this machine's Node.js is $major, the image names Node.js 20" >&2; exit 1; }
  mkdir -p "$work/node/node/bin" "$work/node/node/include" "$work/node/node/lib/node_modules"
  cp "$(readlink -f "$node_bin")" "$work/node/node/bin/node"
  cp -r "$prefix/include/node" "$work/node/node/include/node"
  cp -r "$npm_dir" "$work/node/node/lib/node_modules/npm"
  cp "$here/node.Dockerfile" "$work/node/Dockerfile"
  cp "${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}" "$work/node/machine-ca-bundle.crt"
  echo "[standin] $node_image from $debian and Node.js $(node --version)" >&2
  docker build -q --build-arg "DEBIAN_IMAGE=$debian" -t "$node_image" "$work/node" >/dev/null
fi
if ! docker image inspect "$postgres_image" >/dev/null 2>&1; then
  mkdir -p "$work/postgres"
  cp "$here/postgres.Dockerfile" "$work/postgres/Dockerfile"
  cp "$here/postgres-entrypoint.sh" "$work/postgres/"
  echo "[standin] $postgres_image from $debian and Debian's postgresql-15" >&2
  docker build -q --build-arg "DEBIAN_IMAGE=$debian" -t "$postgres_image" "$work/postgres" >/dev/null
fi
echo "NODE_IMAGE=$node_image"
echo "POSTGRES_IMAGE=$postgres_image"

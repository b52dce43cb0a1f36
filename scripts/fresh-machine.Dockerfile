# The clean machine of scripts/fresh-machine-check.sh --container: Debian 12 with Node.js 20 and
# what a Node.js machine has for native addons (python3, make, g++) and git. No Chromium, no
# PostgreSQL, nothing of this project's: the README's commands must bring the rest themselves.
ARG NODE_IMAGE=node:20-bookworm-slim
FROM ${NODE_IMAGE}
RUN apt-get update -qq \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git ca-certificates curl python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /root

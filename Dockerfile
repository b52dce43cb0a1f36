# paygate image: built once in a first stage (with the dev dependencies and a compiler for the
# SQLite driver), run in a second without them, as a non-root user, with a health check.
# docs/production.md; scripts/compose-check.sh builds it and serves signed sales through it.
# NODE_IMAGE names the base image; it is changed only to check this file offline
# (scripts/offline-base-images/build.sh).
ARG NODE_IMAGE=node:20-bookworm-slim
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# better-sqlite3 builds from source when no prebuilt binary is reachable.
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE}
# The heap bound of scripts/node-flags.mjs (HEAP_FLAG), as npm start passes it.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 PAYGATE_DATA_DIR=/var/lib/paygate NODE_OPTIONS=--max-old-space-size=512
RUN groupadd --system paygate && useradd --system --gid paygate --home-dir /app paygate \
  && mkdir -p /var/lib/paygate && chown paygate:paygate /var/lib/paygate
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
USER paygate
EXPOSE 8080
VOLUME ["/var/lib/paygate"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/cli.js", "start"]

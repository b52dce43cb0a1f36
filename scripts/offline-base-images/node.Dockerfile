# A stand-in for node:20-bookworm-slim where Docker Hub cannot be reached (build.sh): Debian 12
# from debootstrap plus the Node.js 20 and npm of the machine that builds it, laid out as the
# official image lays them out (/usr/local). It is for checking this project's Dockerfile and
# compose.yaml offline, not for production.
ARG DEBIAN_IMAGE=paygate-standin/debian:bookworm
FROM ${DEBIAN_IMAGE}
COPY node/bin/node /usr/local/bin/node
COPY node/include/node /usr/local/include/node
COPY node/lib/node_modules/npm /usr/local/lib/node_modules/npm
# This machine's certificate authorities, so that npm reaches the registry the way the machine does
# (through its network's TLS proxy, if it has one).
COPY machine-ca-bundle.crt /etc/ssl/machine-ca-bundle.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
  && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
  && node --version && npm --version
# Node's headers are in the image, so native addons build without downloading them (the official
# image's builds download them from nodejs.org, which an offline machine cannot reach). Both
# settings are also in npm's global npmrc, which holds even for a command run under env -i.
ENV npm_config_nodedir=/usr/local NODE_EXTRA_CA_CERTS=/etc/ssl/machine-ca-bundle.crt
RUN mkdir -p /usr/local/etc \
  && printf 'cafile=/etc/ssl/machine-ca-bundle.crt\nnodedir=/usr/local\nfund=false\naudit=false\nupdate-notifier=false\n' >/usr/local/etc/npmrc
CMD ["node"]

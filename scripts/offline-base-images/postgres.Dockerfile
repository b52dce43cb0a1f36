# A stand-in for postgres:16-bookworm where Docker Hub cannot be reached (build.sh): Debian 12's
# own PostgreSQL 15, with an entrypoint that honours the three variables compose.yaml sets
# (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB) and a data folder at the official image's path.
# For checking compose.yaml offline, not for production.
ARG DEBIAN_IMAGE=paygate-standin/debian:bookworm
FROM ${DEBIAN_IMAGE}
RUN apt-get update -qq \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 postgresql-client-15 \
  && rm -rf /var/lib/apt/lists/*
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
RUN chmod 0755 /usr/local/bin/postgres-entrypoint.sh && mkdir -p /var/run/postgresql \
  && chown postgres:postgres /var/run/postgresql
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]

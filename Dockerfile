# swarmcast: the node (`swarmcast`, the entrypoint) and `swarmcast-tracker`.
#   docker build -t swarmcast .
#   docker build --build-arg BASE=local/bookworm:base -t swarmcast .   # no registry
# (tools/docker/build-base-image makes local/bookworm:base with debootstrap.)
# The build stage installs exactly what tools/install-deps --build-only
# lists (the same script the README uses) and builds with the release
# preset; the final stage carries the two binaries and their shared
# libraries only. See deploy/ for a compose swarm.
ARG BASE=debian:bookworm-slim

FROM ${BASE} AS build
ARG JOBS=2
# The dependency layer depends on the install script alone, so it is reused
# until the package list changes.
COPY tools/install-deps /src/tools/install-deps
RUN /src/tools/install-deps --build-only \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
COPY . /src
WORKDIR /src
# No ccache in a one-shot build: its cache would start empty every time.
ENV CCACHE_DISABLE=1
RUN cmake --preset release -DSWARMCAST_FUZZ=OFF \
 && cmake --build --preset release -j "${JOBS}" --target swarmcast swarmcast-tracker \
 && strip --strip-debug -o /swarmcast build/release/node/swarmcast \
 && strip --strip-debug -o /swarmcast-tracker build/release/tracker/swarmcast-tracker

FROM ${BASE}
# The shared libraries the binaries need beyond libc and libstdc++ (from
# `ldd`): Boost.Program_options, libtorrent-rasterbar, OpenSSL, SQLite.
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libboost-program-options1.74.0 libtorrent-rasterbar2.0 libssl3 libsqlite3-0 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
 && useradd --uid 10001 --user-group --home-dir /data --create-home swarmcast \
 && mkdir -p /var/lib/swarmcast \
 && chown swarmcast:swarmcast /var/lib/swarmcast
COPY --from=build /swarmcast /swarmcast-tracker /usr/local/bin/
COPY tools/docker/healthcheck /usr/local/bin/swarmcast-healthcheck
USER swarmcast
WORKDIR /data
# The node ignores SIGPIPE itself (node/cli/main.cc); run the container with
# an init (`docker run --init`, compose `init: true`) so that signals reach
# it and stopping takes no grace period.
HEALTHCHECK --interval=10s --timeout=10s --start-period=30s --retries=3 \
  CMD ["/usr/local/bin/swarmcast-healthcheck"]
EXPOSE 6969/tcp 6969/udp
ENTRYPOINT ["swarmcast"]
CMD ["--help"]

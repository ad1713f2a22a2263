# The nodesmith controller image: built on Debian slim, the core and every provider plugin laid out by
# scripts/image-layout.sh (the same script the tests run the controller from), run as a non-root user.
#   docker build -t nodesmith:0.1.0 .        (or: bash scripts/image-layout.sh --image nodesmith:0.1.0)
FROM debian:bookworm-slim AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      meson ninja-build pkg-config gcc libc6-dev \
      libcurl4-openssl-dev libcjson-dev libssl-dev libyaml-dev libexpat1-dev libmicrohttpd-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN meson setup /build --prefix=/usr --libdir=lib --buildtype=release -Dtests=false \
 && ninja -C /build \
 && bash scripts/image-layout.sh /build /layout

FROM debian:bookworm-slim
# Only the shared libraries the binaries link (readelf -d), and the CA bundle the clouds' APIs are verified with.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates libcurl4 libcjson1 libssl3 libyaml-0-2 libexpat1 libmicrohttpd12 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 65532 nodesmith \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin nodesmith
COPY --from=build /layout/ /
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["/usr/bin/nodesmith"]
CMD ["controller"]

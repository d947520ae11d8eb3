# citriage: a multi-stage build. The build stage compiles the release binary; the
# runtime image holds only that binary, CA certificates and an unprivileged user.
#   docker build -t citriage .
#   docker run --rm -e CITRIAGE_DB=postgres://... citriage watch --config /etc/citriage/citriage.toml
# See docs/deploy.md.

FROM rust:1.88-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock rustfmt.toml ./
COPY crates ./crates
# The bundled example dashboards are compiled into the binary (`demo`).
COPY examples ./examples
RUN cargo build --release --locked -p citriage \
    && strip target/release/citriage

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home-dir /var/lib/citriage --create-home citriage
COPY --from=build /src/target/release/citriage /usr/local/bin/citriage
USER citriage
WORKDIR /var/lib/citriage
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/citriage"]
CMD ["--help"]

# Multi-stage build: compile in the Rust image, run on slim Debian.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock build.rs askama.toml ./
# Checked statements build against the recorded schema, without a database.
COPY .cargo .cargo
COPY .sqlx .sqlx
COPY src src
COPY migrations migrations
COPY templates templates
COPY static static
COPY benches benches
RUN cargo build --release --locked --bin atelier

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home /app atelier
WORKDIR /app
COPY --from=build /src/target/release/atelier /usr/local/bin/atelier
COPY static /app/static
ENV ATELIER_STATIC_DIR=/app/static ATELIER_BIND=0.0.0.0:8080
USER atelier
EXPOSE 8080
ENTRYPOINT ["atelier"]
CMD ["serve"]

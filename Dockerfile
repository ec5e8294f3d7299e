# Images of kudo's in-cluster parts: the webhook and the manager.
#
#   docker build --target webhook -t kudo/kudo-webhook:0.1.0 .
#   docker build --target manager -t kudo/kudo-manager:0.1.0 .
#
# Build stage: the workspace, with the lockfile; runtime stage: the static-free binary on a
# distroless base, as a non-root user (the Deployment of `kudo init` runs it read-only).
FROM rust:1.89-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p kudo-webhook --bin kudo-webhook \
 && cargo build --release --locked -p kudo-manager --bin kudo-manager

FROM gcr.io/distroless/cc-debian12:nonroot AS webhook
COPY --from=build /src/target/release/kudo-webhook /usr/local/bin/kudo-webhook
USER nonroot:nonroot
EXPOSE 8443
ENTRYPOINT ["/usr/local/bin/kudo-webhook"]

FROM gcr.io/distroless/cc-debian12:nonroot AS manager
COPY --from=build /src/target/release/kudo-manager /usr/local/bin/kudo-manager
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/kudo-manager"]

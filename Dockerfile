# syntax=docker/dockerfile:1
#
# Two images from one build: `docker build --target adapter` and `docker build --target status-reporter`.
# Static musl binaries (ring's C compiled with musl-gcc) on distroless static (CA certificates, uid 65532, no shell).
#
# Platforms: linux/amd64 and linux/arm64 (`docker buildx build --platform linux/amd64,linux/arm64 …`). The builder
# runs on the TARGET platform, so the musl toolchain is always native (musl-tools, CC_<target>=musl-gcc): simple and
# correct. Building arm64 on an amd64 host therefore runs the builder under QEMU (binfmt) — slow, but no cross C
# toolchain. (Cross-compiling instead needs `FROM --platform=$BUILDPLATFORM`, an aarch64 musl gcc for ring as
# CC_aarch64_unknown_linux_musl and CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER.)
#
# The cargo commands below use the workspace's `release` profile (Cargo.toml: opt-level z, lto, codegen-units = 1,
# strip, panic = abort) and build each package on its own, exactly as docs/benchmarks.md measures them: built in one
# command, Cargo would unify the two packages' dependency features and the status-reporter would grow by ~0.5 MB.
# tests/tests/dockerfile.rs checks both.

FROM rust:1.95-bookworm AS builder
ARG TARGETARCH
RUN apt-get update \
 && apt-get install -y --no-install-recommends musl-tools \
 && rm -rf /var/lib/apt/lists/*
RUN case "${TARGETARCH}" in \
      amd64) echo x86_64-unknown-linux-musl ;; \
      arm64) echo aarch64-unknown-linux-musl ;; \
      *) echo "unsupported TARGETARCH '${TARGETARCH}' (use linux/amd64 or linux/arm64)" >&2; exit 1 ;; \
    esac > /rust-target \
 && rustup target add "$(cat /rust-target)"
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry,sharing=locked \
    --mount=type=cache,target=/usr/local/cargo/git,sharing=locked \
    --mount=type=cache,target=/src/target,id=hypershift-target-${TARGETARCH},sharing=locked \
    RUST_TARGET="$(cat /rust-target)" \
 && export "CC_$(echo "${RUST_TARGET}" | tr - _)=musl-gcc" \
 && cargo build --release --locked --target "$RUST_TARGET" -p hypershift-adapter --bin hypershift-adapter \
 && cargo build --release --locked --target "$RUST_TARGET" -p status-reporter --bin status-reporter \
 && mkdir -p /out \
 && cp "target/${RUST_TARGET}/release/hypershift-adapter" "target/${RUST_TARGET}/release/status-reporter" /out/

FROM gcr.io/distroless/static-debian12:nonroot AS adapter
COPY --from=builder /out/hypershift-adapter /usr/local/bin/hypershift-adapter
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/hypershift-adapter"]

FROM gcr.io/distroless/static-debian12:nonroot AS status-reporter
COPY --from=builder /out/status-reporter /usr/local/bin/status-reporter
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/status-reporter"]

#!/usr/bin/env bash
# The test command: formatting, lints, and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in cargo rustfmt cargo-clippy; do
    command -v "$tool" >/dev/null || { echo "test.sh: $tool is missing (install the Rust toolchain with rustfmt and clippy)" >&2; exit 1; }
done
scripts/setup-torch.sh
# SeaweedFS, the S3 server the object-store tests start (WEED: its binary).
WEED="$(scripts/setup-s3.sh)"
export WEED
scripts/check-k8s.sh
cargo fmt --all -- --check
# The test profile, so that the build scripts' outputs (the C and C++ of
# aws-lc-sys and torch-sys) and the proc macros are shared with the tests.
cargo clippy --workspace --all-targets --locked --profile test -- -D warnings
# The web board's static files, for its browser tests (the core built for
# wasm32-unknown-unknown, onnxruntime-web, Chromium), and its exports' lints.
scripts/web-build.sh >/dev/null
cargo clippy -p gipf-web --target wasm32-unknown-unknown --locked -- -D warnings
cargo test --workspace --locked

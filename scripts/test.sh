#!/usr/bin/env bash
# The test command: formatting, lints, and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in cargo rustfmt cargo-clippy clippy-driver; do
    command -v "$tool" >/dev/null || { echo "test.sh: $tool is missing (install the Rust toolchain with rustfmt and clippy)" >&2; exit 1; }
done
scripts/setup-torch.sh
# SeaweedFS, the S3 server the object-store tests start (WEED: its binary).
WEED="$(scripts/setup-s3.sh)"
export WEED
scripts/check-k8s.sh
# No file outside the research log speaks of how the project was developed.
scripts/check-history.sh
cargo fmt --all -- --check
cargo fmt --manifest-path python/Cargo.toml -- --check
# Lints and tests share one build: clippy is the workspace's compiler
# (CLIPPY_ARGS is how cargo-clippy hands it its flags), so the dependencies
# are compiled once, for the tests, instead of checked and then compiled.
RUSTC_WORKSPACE_WRAPPER=clippy-driver
CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
export RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
cargo build --workspace --all-targets --locked --profile test
# The crates' documentation builds without warnings (no broken link, none
# from public documentation to a private item).
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
# The web board's static files, for its browser tests (the core built for
# wasm32-unknown-unknown, onnxruntime-web; Chromium for the tests), and its
# exports' lints.
scripts/setup-web.sh --browser
scripts/web-build.sh >/dev/null
cargo clippy -p gipf-web --target wasm32-unknown-unknown --locked -- -D warnings
# The Python package, built (and linted) in release before the tests, one
# of which compares its training samples with the trainer's.
scripts/setup-python.sh
cargo test --workspace --locked
# Its own tests: against the programs built above, and PettingZoo's checks.
./.python -m pytest -q python/tests

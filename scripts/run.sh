#!/usr/bin/env bash
# Sets up LibTorch, builds the release binaries and runs the main job: the
# training loop with the CPU config in runs/main (self-play with the newest
# checkpoint, training, a new checkpoint, again) until stopped. Started again,
# it resumes where it stopped.
# With arguments, runs one of the binaries instead: scripts/run.sh gipf rules ...
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-torch.sh
cargo build --release --workspace --locked
TARGET="${CARGO_TARGET_DIR:-target}"
if [ $# -gt 0 ]; then
    # `gipf serve` serves the web board's page: built here (once, then kept up to date).
    if [ "$1" = gipf ] && [ "${2:-}" = serve ]; then
        scripts/web-build.sh >/dev/null
    fi
    bin="$1"; shift
    exec "$TARGET/release/$bin" "$@"
fi
exec "$TARGET/release/gipf" loop --config configs/cpu.toml --run runs/main

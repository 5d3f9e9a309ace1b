#!/usr/bin/env bash
# Sets up LibTorch, builds the release binaries and runs the main job: the
# training loop in runs/main (self-play with the newest checkpoint, training,
# a new checkpoint, again) until stopped, on every GPU with configs/gpu.toml
# where LibTorch sees CUDA and on the CPU with configs/cpu.toml otherwise
# (it says which at start; `scripts/run.sh gipf loop --config FILE --devices
# LIST` chooses). Started again, it resumes where it stopped.
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
exec "$TARGET/release/gipf" loop --config auto --run runs/main

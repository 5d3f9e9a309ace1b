#!/usr/bin/env bash
# Sets up LibTorch, builds the release binaries and runs the main job: self-play
# with the CPU config into runs/main/games, using the newest checkpoint in
# runs/main/models (a fresh network while there is none), until stopped.
# With arguments, runs one of the binaries instead: scripts/run.sh gipf rules ...
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-torch.sh
cargo build --release --workspace --locked
if [ $# -gt 0 ]; then
    bin="$1"; shift
    exec "./target/release/$bin" "$@"
fi
mkdir -p runs/main/games runs/main/models
exec ./target/release/selfplay --config configs/cpu.toml --out runs/main/games --model runs/main/models

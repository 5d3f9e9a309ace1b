#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds against the full CUDA wheel, shows
# that the binaries link the CUDA backend, and measures the GPU config's raw
# network throughput, self-play against it, and training (with and without
# data loading). About 3 minutes after the build. Output: figures on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${SECONDS_EACH:-60}"
WORK="${WORK:-/tmp/gipf-gpu-check}"
scripts/setup-torch.sh
cargo build --release --workspace --locked
echo "== linking"
readelf -d target/release/gipf | grep -E 'libtorch_cuda|RUNPATH|RPATH'
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
rm -rf "$WORK" && mkdir -p "$WORK"
echo "== raw network (configs/gpu.toml)"
target/release/gipf bench net --config configs/gpu.toml --device cuda --seconds 5
echo "== self-play against the bare network"
target/release/selfplay --config configs/gpu.toml --device cuda --out "$WORK/bench-games" --bench "$SECONDS_EACH"
echo "== training (on quick games of the tiny config: samples do not depend on the network)"
target/release/selfplay --config configs/tiny.toml --device cpu --games 60 --out "$WORK/run/games" > /dev/null
target/release/trainer --config configs/gpu.toml --device cuda --run "$WORK/run" --bench "$SECONDS_EACH"

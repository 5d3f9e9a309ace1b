#!/usr/bin/env bash
# The GPU check: shows that the binaries load LibTorch's CUDA backend and see
# the GPU, then measures the GPU config's raw network throughput by batch
# size and self-play against it (with its ratio to raw), each in float32 and
# bf16, training in both (with and without data loading), and the trainer and
# self-play side by side as a run uses them. Runs where nothing is
# built or installed: from the bundle of scripts/gpu-bundle.sh (bin/ and
# configs/ beside this script), or
# in a checkout after `cargo build --release --workspace`. The LibTorch it
# loads is the one of the machine's python3 (PYTHON to choose another).
#
#   .gpu/gpu-check.sh                  # on the GPU machine: about 7 minutes
#   .gpu/gpu-check.sh --device cpu     # a dry run on a CPU (quick, cpu.toml)
#
# Figures go to stdout and to $OUT/gpu-check.txt ($OUT: the device tool's
# output folder; /tmp when unset).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
DEVICE=cuda
[ "${1:-}" = "--device" ] && DEVICE="${2:?--device needs cpu or cuda}"
if [ -d "$HERE/bin" ]; then BIN="$HERE/bin" CONFIGS="$HERE/configs"; else BIN="$HERE/../target/release" CONFIGS="$HERE/../configs"; fi
PYTHON="${PYTHON:-python3}"
REPORT="${OUT:-/tmp}/gpu-check.txt"
WORK="${WORK:-/tmp/gpu-check-work}"
if [ "$DEVICE" = cpu ]; then
    CONFIG="${CONFIG:-$CONFIGS/cpu.toml}" SECONDS_EACH="${SECONDS_EACH:-5}" BATCHES="${BATCHES:-1,32,256}"
    TRAIN_SECONDS="${TRAIN_SECONDS:-3}" BOX_SECONDS="${BOX_SECONDS:-20}"
else
    CONFIG="${CONFIG:-$CONFIGS/gpu.toml}" SECONDS_EACH="${SECONDS_EACH:-40}" BATCHES="${BATCHES:-1,64,256,1024,2048,4096}"
    # Each trainer bench runs twice this: raw steps, then with data loading.
    TRAIN_SECONDS="${TRAIN_SECONDS:-20}" BOX_SECONDS="${BOX_SECONDS:-120}"
fi
mkdir -p "$(dirname "$REPORT")"
exec > >(tee "$REPORT") 2>&1

echo "== machine"
TORCH_LIB="$("$PYTHON" -W ignore -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
"$PYTHON" -W ignore -c 'import torch; print("python torch", torch.__version__, "| cuda", torch.version.cuda, "| GPU seen by PyTorch:", torch.cuda.is_available())'
export LD_LIBRARY_PATH="$TORCH_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
nproc
cat "$HERE/BUILD" 2>/dev/null || true
echo "== linking: the LibTorch libraries gipf loads"
ldd "$BIN/gipf" | grep -E 'libtorch|libc10' || true
if ldd "$BIN/gipf" | grep -q 'libtorch_cuda.so => not found'; then echo "libtorch_cuda.so not found under $TORCH_LIB"; exit 1; fi

rm -rf "$WORK" && mkdir -p "$WORK"
# with_precision P: the config with play.precision and train.precision = P
# (their own lines, if any, replaced).
with_precision() {
    local file="$WORK/$(basename "$CONFIG" .toml)-$1.toml"
    sed -e '/^precision *=/d' -e "s/^\[\(play\|train\)\]\$/[\1]\nprecision = \"$1\"/" "$CONFIG" > "$file"
    echo "$file"
}
FP32="$(with_precision fp32)" BF16="$(with_precision bf16)"
echo "== raw network ($(basename "$CONFIG")), float32"
"$BIN/gipf" bench net --config "$FP32" --device "$DEVICE" --seconds 3 --batches "$BATCHES"
echo "== self-play against the bare network"
"$BIN/selfplay" --config "$FP32" --device "$DEVICE" --out "$WORK/bench-games" --bench "$SECONDS_EACH"
echo "== raw network ($(basename "$CONFIG")), bf16"
"$BIN/gipf" bench net --config "$BF16" --device "$DEVICE" --seconds 3 --batches "$BATCHES"
echo "== self-play against the bare network, bf16"
"$BIN/selfplay" --config "$BF16" --device "$DEVICE" --out "$WORK/bench-games-bf16" --bench "$SECONDS_EACH"
echo "== self-play's CPU side alone (no network)"
"$BIN/selfplay" --config "$FP32" --device "$DEVICE" --out "$WORK/constant" --bench 15 --constant-network
echo "== training (on quick games of the tiny config: samples do not depend on the network)"
"$BIN/selfplay" --config "$CONFIGS/tiny.toml" --device cpu --games 60 --out "$WORK/run/games" >/dev/null 2>&1
"$BIN/trainer" --config "$FP32" --device "$DEVICE" --run "$WORK/run" --bench "$TRAIN_SECONDS"
echo "== training, bf16 steps (fp32 weights)"
"$BIN/trainer" --config "$BF16" --device "$DEVICE" --run "$WORK/run" --bench "$TRAIN_SECONDS"
echo "== the trainer and self-play side by side, $BOX_SECONDS s (min_samples 20000, so that training starts)"
BOX="$WORK/box" BOX_CONFIG="$WORK/box.toml"
sed -e 's/^min_samples = .*/min_samples = 20000/' "$CONFIG" > "$BOX_CONFIG"
"$BIN/trainer" --config "$BOX_CONFIG" --device "$DEVICE" --run "$BOX" > "$WORK/box-trainer.log" 2>&1 &
TRAINER=$!
for _ in $(seq 60); do ls "$BOX"/models/*.safetensors >/dev/null 2>&1 && break; sleep 0.5; done
"$BIN/selfplay" --config "$BOX_CONFIG" --device "$DEVICE" --out "$BOX/games" --model "$BOX/models" > "$WORK/box-selfplay.log" 2>&1 &
SELFPLAY=$!
if command -v nvidia-smi >/dev/null; then nvidia-smi dmon -s u -d 10 -c $((BOX_SECONDS / 10)) & fi
sleep "$BOX_SECONDS"
kill -INT "$SELFPLAY" "$TRAINER" || true
wait "$SELFPLAY" "$TRAINER" || true
tail -1 "$WORK/box-selfplay.log"
grep -E 'max_reuse|training stopped' "$WORK/box-trainer.log" | tail -2
echo "== done; figures in $REPORT"

#!/usr/bin/env bash
# Measures a GPU box (about 7 minutes): shows that the binaries load
# LibTorch's CUDA backend and see the GPUs (`gipf info`), then the GPU
# config's raw network by batch size in fp32 and bf16, self-play with one
# and with two workers on one GPU (two batches in flight) with the GPU's busy
# share, self-play's CPU side alone, training steps with and without data
# loading, and `gipf loop` itself on every GPU for two minutes. Runs from a
# checkout after `cargo build --release --workspace`, or from the bundle of
# scripts/gpu-bundle.sh (bin/ and configs/ beside this script). The
# LibTorch it loads is the one of the machine's python3 (PYTHON to choose
# another).
#
#   scripts/gpu-check.sh                  # on a GPU box: about 7 minutes
#   scripts/gpu-check.sh --device cpu     # a dry run on a CPU (quick, cpu.toml)
#
# Figures go to stdout and to $OUT/gpu-check.txt (OUT: /tmp when unset).
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
# busy_while LABEL COMMAND...: runs the command, sampling the GPUs' busy
# share (nvidia-smi's "sm" column, each second) meanwhile, and prints its mean.
busy_while() {
    local label="$1" samples="$WORK/busy-$1.txt"; shift
    local dmon="" status=0
    if command -v nvidia-smi >/dev/null; then nvidia-smi dmon -s u -d 1 > "$samples" & dmon=$!; fi
    "$@" || status=$?
    if [ -n "$dmon" ]; then
        kill "$dmon" 2>/dev/null || true
        awk -v label="$label" '!/^#/ && NF > 2 { sm += $2; n++ } END { if (n) printf "GPU busy (%s): %.0f%% of %d samples\n", label, sm / n, n }' "$samples"
    fi
    return "$status"
}
devices=auto
case "$DEVICE" in cpu | cuda:*) devices="$DEVICE" ;; esac
echo "== what gipf sees, and the layout gipf loop would use"
"$BIN/gipf" info --config "$CONFIG" --devices "$devices"
echo "== raw network ($(basename "$CONFIG")), float32"
"$BIN/gipf" bench net --config "$FP32" --device "$DEVICE" --seconds 3 --batches "$BATCHES"
echo "== raw network ($(basename "$CONFIG")), bf16"
"$BIN/gipf" bench net --config "$BF16" --device "$DEVICE" --seconds 3 --batches "$BATCHES"
for workers in 1 2; do
    echo "== self-play in bf16 against the bare network, $workers worker(s) on one device"
    busy_while "selfplay-$workers" "$BIN/selfplay" --config "$BF16" --device "$DEVICE" --workers "$workers" \
        --out "$WORK/bench-games-$workers" --bench "$SECONDS_EACH"
done
echo "== self-play's CPU side alone (no network)"
"$BIN/selfplay" --config "$FP32" --device "$DEVICE" --out "$WORK/constant" --bench 15 --constant-network
echo "== training (on quick games of the tiny config: samples do not depend on the network)"
"$BIN/selfplay" --config "$CONFIGS/tiny.toml" --device cpu --games 60 --out "$WORK/run/games" >/dev/null 2>&1
"$BIN/trainer" --config "$FP32" --device "$DEVICE" --run "$WORK/run" --bench "$TRAIN_SECONDS"
echo "== gipf loop on every device, $BOX_SECONDS s (min_samples 20000, so that training starts)"
BOX="$WORK/box" BOX_CONFIG="$WORK/box.toml"
sed -e 's/^min_samples = .*/min_samples = 20000/' "$CONFIG" > "$BOX_CONFIG"
"$BIN/gipf" loop --config "$BOX_CONFIG" --devices "$devices" --run "$BOX" > "$WORK/box.log" 2>&1 &
LOOP=$!
busy_while loop sleep "$BOX_SECONDS"
kill -INT "$LOOP" || true
wait "$LOOP" || true
grep -E 'layout|threads:|self-play on|trainer:' "$WORK/box.log" | head -8
grep -E 'self-play status' "$WORK/box.log" | tail -4
grep -E 'max_reuse|training stopped|saved' "$WORK/box.log" | tail -2
echo "== done; figures in $REPORT"

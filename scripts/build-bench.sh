#!/usr/bin/env bash
# What the release profile costs and what it buys: builds the workspace from
# scratch (a fresh build folder; crates already downloaded) once with the
# release profile of Cargo.toml and once with one codegen unit and debug
# info (CARGO_PROFILE_RELEASE_*), times each build, and runs the
# self-play benchmark with each build's binary, with the network and with
# the search alone (--constant-network), ROUNDS times each, interleaved.
#
#   scripts/build-bench.sh [SECONDS]    (default 30 seconds a benchmark)
#
# Settings (environment): ROUNDS=2, OUT=runs/build-bench.
# Run it with nothing else running: both figures are wall-clock time.
# Output: OUT/report.md (and each build's log and timings in OUT).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:-30}"
ROUNDS="${ROUNDS:-2}"
OUT="${OUT:-runs/build-bench}"
scripts/setup-torch.sh
cargo fetch --locked
mkdir -p "$OUT"
report="$OUT/report.md"

# build NAME [VAR=VALUE...]: a from-scratch release build in OUT/target-NAME.
build() {
    local name="$1"
    shift
    rm -rf "$OUT/target-$name"
    local start
    start=$(date +%s)
    env "$@" CARGO_TARGET_DIR="$OUT/target-$name" cargo build --release --workspace --locked --timings \
        >"$OUT/build-$name.log" 2>&1
    echo $(($(date +%s) - start))
    cp "$OUT/target-$name/cargo-timings/cargo-timing.html" "$OUT/timings-$name.html"
}

# bench NAME [--constant-network]: evaluations/s of NAME's self-play benchmark.
bench() {
    local name="$1"
    shift
    "$OUT/target-$name/release/selfplay" --config configs/cpu.toml --out "$OUT/games" \
        --bench "$SECONDS_EACH" "$@" 2>/dev/null | sed -nE 's/^self-play[^:]*: ([0-9]+) evaluations.*/\1/p'
    rm -rf "$OUT/games"
}

declare -A seconds with_network alone
seconds[profile]=$(build profile)
seconds[one-unit]=$(build one-unit CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 CARGO_PROFILE_RELEASE_DEBUG=1)
for _ in $(seq "$ROUNDS"); do
    for name in profile one-unit; do
        with_network[$name]="${with_network[$name]:-} $(bench $name)"
        alone[$name]="${alone[$name]:-} $(bench $name --constant-network)"
    done
done
{
    echo "# The release build: Cargo.toml's profile against one codegen unit with debug info"
    echo
    echo "$(lscpu | sed -nE 's/^Model name: +//p'), $(nproc) cores; from-scratch builds of the workspace,"
    echo "self-play benchmarks of $SECONDS_EACH s with \`configs/cpu.toml\` (evaluations/s), $ROUNDS rounds."
    echo
    echo "| build | build time | self-play | search alone (constant network) |"
    echo "|---|---|---|---|"
    for name in profile one-unit; do
        echo "| $name | ${seconds[$name]} s | ${with_network[$name]# } | ${alone[$name]# } |"
    done
} >"$report"
cat "$report"

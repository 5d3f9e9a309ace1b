#!/usr/bin/env bash
# Fuzzes every parser of outside input with cargo-fuzz (libFuzzer, on a
# nightly toolchain, both installed once with rustup and cargo), SECONDS
# each (default 60), from corpora seeded with the tests' fixtures, the
# shipped configs and the rule texts' examples. Prints a table of the inputs
# tried per target and the crashes found in this run (kept in
# fuzz/artifacts/TARGET/; each becomes a regression test).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# RUNS=N stops each target after N inputs too (whichever comes first), for a
# count that does not depend on how busy the machine is.
#
# Targets (fuzz/fuzz_targets/): notation, setup, game, shard, checkpoint,
# config, engine, weights (structure-aware: safetensors files made from the
# input), record (`gipf arena --record`'s pieces), ratings
# (`arena/matches.jsonl`). LibTorch is linked (the parsers live beside the network),
# so the targets run without a sanitizer: a panic is the failure looked for.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:-60}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(notation setup game shard checkpoint config engine weights record ratings)

scripts/setup-torch.sh
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal >&2
command -v cargo-fuzz >/dev/null || cargo +nightly install cargo-fuzz --locked >&2
cargo +nightly fuzz build --sanitizer none >&2
# The targets that reach the network's code load LibTorch from the checkout's link.
export LD_LIBRARY_PATH="$PWD/.torch/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# Seeds, added to whatever the corpora hold from earlier runs.
corpus() { mkdir -p "fuzz/corpus/$1"; echo "fuzz/corpus/$1"; }
seed_text() { printf '%s' "$2" > "$(corpus "$1")/seed-$(printf '%s' "$2" | sha1sum | cut -c1-12)"; }
for action in "a1-b2" "Ga1-b2" "xc3,d4,e5,f5" "x-" "b1-b2 b6-b5 c1-c2" "i5-h5 Gi1-h2"; do seed_text notation "$action"; done
grep -ho '[a-i][0-9]-[a-i][0-9]' ../shared/seeds/*.txt 2>/dev/null | head -50 | while read -r a; do seed_text notation "$a"; done || true
cp tests/fixtures/crossing-rows.json tests/fixtures/gipf-rows.json "$(corpus setup)/"
cp tests/fixtures/game-format-1.json "$(corpus game)/"
cp tests/fixtures/shard-format-2.jsonl.zst "$(corpus shard)/"
cp tests/fixtures/checkpoint-format-*.json "$(corpus checkpoint)/"
cp models/arena/target.jsonl "$(corpus record)/"
cp models/arena/matches.jsonl "$(corpus ratings)/"
cp configs/*.toml "$(corpus config)/"
seed_text engine $'new standard\nplay b1-b2\nlegal\nstate\ngo\nundo\nshow\nposition {"variant": "basic", "board": {}, "reserve": {"white": 12, "black": 12}, "to_move": "white"}\nquit\n'

printf '| target | inputs | seconds | crashes |\n|---|---|---|---|\n'
status=0
for target in "${TARGETS[@]}"; do
    log="fuzz/$target.log"
    start=$(date +%s)
    mkdir -p "fuzz/artifacts/$target" "fuzz/corpus/$target"
    found_before="$(find "fuzz/artifacts/$target" -type f | wc -l)"
    if cargo +nightly fuzz run --sanitizer none "$target" "fuzz/corpus/$target" -- \
        -max_total_time="$SECONDS_EACH" ${RUNS:+-runs="$RUNS"} -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 > "$log" 2>&1; then
        :
    else
        status=1
    fi
    runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)"
    crashes=$(( $(find "fuzz/artifacts/$target" -type f | wc -l) - found_before ))
    printf '| `%s` | %s | %s | %s |\n' "$target" "${runs:-?}" "$(( $(date +%s) - start ))" "$crashes"
done
exit $status

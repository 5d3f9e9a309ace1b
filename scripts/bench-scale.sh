#!/usr/bin/env bash
# The throughput benchmarks of the GPU-box mode, each printed as measured:
#  - selfplay --bench against the raw network, three runs each on the CPU
#    config and on a larger net (10 blocks x 64 channels);
#  - self-play's CPU side alone (--constant-network), 64 games at once, on 1
#    and 2 search threads;
#  - trainer --bench (batches built beside training against one fixed batch);
#  - a trainer's start on a synthetic folder of 1,000,000 positions, resumed
#    and fresh: seconds and memory against the window's size;
#  - bytes a game: one game's JSON against its share of a compressed shard.
#
#   scripts/bench-scale.sh [SECONDS]     (seconds per self-play run, default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:-30}"
scripts/setup-torch.sh >/dev/null
cargo build --release --workspace --locked
bin="${CARGO_TARGET_DIR:-target}/release"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

sed -e 's/^blocks = .*/blocks = 10/' -e 's/^channels = .*/channels = 64/' configs/cpu.toml >"$work/large.toml"
# The CPU side with 64 games at once, as on a GPU box (where many games keep
# the network's batches large), on 1 and 2 search threads.
for threads in 1 2; do
    sed -e "s/^search_threads = 0/search_threads = $threads/" \
        -e 's/^parallel_games = .*/parallel_games = 64/' configs/cpu.toml >"$work/threads$threads.toml"
done

for config in configs/cpu.toml "$work/large.toml"; do
    for run in 1 2 3; do
        echo "== selfplay --bench $SECONDS_EACH, $(basename "$config"), run $run"
        "$bin/selfplay" --config "$config" --out "$work/games" --bench "$SECONDS_EACH" 2>/dev/null
    done
done
for threads in 1 2; do
    echo "== self-play CPU side, $threads search thread(s)"
    "$bin/selfplay" --config "$work/threads$threads.toml" --out "$work/constant" --bench 15 --constant-network 2>/dev/null
done

echo "== trainer --bench 10 (on the games above)"
mkdir -p "$work/run"
mv "$work/games" "$work/run/games"
"$bin/trainer" --config configs/cpu.toml --run "$work/run" --bench 10 --device cpu 2>/dev/null

echo "== bytes a game (CPU config games): JSON lines against compressed shards"
json=$(for f in "$work"/run/games/shard-*; do zstd -dc "$f"; done | wc -c)
games=$(for f in "$work"/run/games/shard-*; do zstd -dc "$f"; done | wc -l)
compressed=$(cat "$work"/run/games/shard-* | wc -c)
echo "$games games: $((json / games)) bytes a game as JSON (one file a game before), $((compressed / games)) in shards"

echo "== trainer start on 1,000,000 positions"
"$bin/gipf" bench window --dir "$work/synthetic" --generate 1000000
"$bin/gipf" bench window --dir "$work/synthetic"
"$bin/gipf" bench window --dir "$work/synthetic" --fresh

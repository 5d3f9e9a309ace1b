#!/usr/bin/env bash
# The classical yardsticks' ladders, GAMES games each (default 40) in
# colour-swapped pairs, with the time each side took per action; prints a
# Markdown table for docs/results.md. Run it with nothing else running: the timed
# players read the clock.
#
# alphabeta (the default): each depth against the one below (depth 1 against
# greedy, up to depth 5), alphabeta:250ms (the equal-time opponent) against
# each depth from 2, and with UCT=1 each depth against uct:10000.
# classic: classic:1 against alphabeta:1, each depth against the one below up
# to depth 5, classic:250ms against alphabeta:250ms (equal time) and against
# classic:5, then both players' nodes per second (gipf bench classic).
#
#   scripts/ladder.sh [GAMES] [alphabeta|classic]
set -euo pipefail
cd "$(dirname "$0")/.."
GAMES="${1:-40}"
LADDER="${2:-alphabeta}"
THREADS="${THREADS:-2}"
scripts/setup-torch.sh
cargo build --release --workspace --locked
GIPF="${GIPF:-${CARGO_TARGET_DIR:-target}/release/gipf}"

row() {
    local start out line
    start=$SECONDS
    out="$("$GIPF" arena "$1" "$2" --games "$GAMES" --threads "$THREADS" --seed 3)"
    line="$(echo "$out" | grep '^A .* wins')"
    # "A 38 wins, 2 losses, 0 draws (length cap); score 95.0% [83.5%, 98.6%]; Elo +512 [+282, +741] (95%)"
    # "A per action: mean 2.1 ms, max 9.0 ms"
    times() { echo "$out" | sed -nE "s/^$1 per action: mean ([0-9.]+) ms, max ([0-9.]+) ms/\\1 \\/ \\2/p"; }
    echo "| \`$1\` | \`$2\` | $(echo "$line" | sed -E 's/^A ([0-9]+) wins, ([0-9]+) losses, ([0-9]+) draws.*/\1-\2-\3/') \
| $(echo "$line" | sed -E 's/.*score ([^;]+);.*/\1/') | $(echo "$line" | sed -E 's/.*Elo ([^(]+) \(95%\).*/\1/') \
| $(times A) | $(times B) | $((SECONDS - start)) s |"
}

echo "| player | opponent | won-lost-drawn | score (95%) | Elo (95%) | player's ms per action (mean / max) | opponent's | match |"
echo "|---|---|---|---|---|---|---|---|"
if [ "$LADDER" = classic ]; then
    row classic:1 alphabeta:1
    for depth in 2 3 4 5; do
        row "classic:$depth" "classic:$((depth - 1))"
    done
    row classic:250ms alphabeta:250ms
    row classic:250ms classic:5
    echo
    "$GIPF" bench classic
    exit 0
fi
row alphabeta:1 greedy
for depth in 2 3 4 5; do
    row "alphabeta:$depth" "alphabeta:$((depth - 1))"
done
for depth in 2 3 4 5; do
    row alphabeta:250ms "alphabeta:$depth"
done
if [ "${UCT:-0}" = 1 ]; then
    for depth in 1 2 3 4; do
        row "alphabeta:$depth" uct:10000
    done
fi

#!/usr/bin/env bash
# The shipped model against the classical player at a time per action, the
# strength target's measurement, played in pieces that add up, each a short
# while with the machine to itself: each piece is GAMES
# colour-swapped games from the next free seed's openings, recorded in
# models/arena/target.jsonl (`gipf arena --record`) with the model's
# weights, the precision and the CPU; the last lines printed are the match
# in all, every piece of the same model, opponent, budget, precision and
# machine. Run it with nothing else running: both sides play at a time per
# action.
#
#   scripts/target.sh
#
# Settings (environment):
#   OPPONENT=classic:250ms BUDGET=250ms   the reference plays at BUDGET
#   GAMES=20 PIECES=1 THREADS=2
set -euo pipefail
cd "$(dirname "$0")/.."
OPPONENT="${OPPONENT:-classic:250ms}"
BUDGET="${BUDGET:-250ms}"
GAMES="${GAMES:-20}"
PIECES="${PIECES:-1}"
THREADS="${THREADS:-2}"

scripts/setup-torch.sh
cargo build --release --workspace --locked
GIPF="${CARGO_TARGET_DIR:-target}/release/gipf"
mkdir -p models/arena
for _ in $(seq "$PIECES"); do
    "$GIPF" arena "reference@$BUDGET" "$OPPONENT" --games "$GAMES" --threads "$THREADS" \
        --record models/arena/target.jsonl
done

#!/usr/bin/env bash
# Texel tuning of the classic player's evaluation: self-play games of the
# reference model (played first, for MINUTES, when GAMES has none), a
# logistic fit of the evaluation's features to the games' results (`gipf
# tune`: the fit, a held-out check, the weights before and after), written
# into core/src/players/alphabeta/classic/weights.rs. Rebuild to play with them;
# `scripts/ladder.sh 40 classic` measures the player.
#
#   scripts/tune-classic.sh [GAMES] [MINUTES]
set -euo pipefail
cd "$(dirname "$0")/.."
GAMES="${1:-runs/texel/games}"
MINUTES="${2:-30}"
scripts/setup-torch.sh
cargo build --release --workspace --locked
BIN="${CARGO_TARGET_DIR:-target}/release"
if [ -z "$(ls -A "$GAMES" 2>/dev/null)" ]; then
    echo "playing $MINUTES minutes of self-play with the reference model into $GAMES"
    # SIGINT: the process writes its finished games and stops.
    timeout --signal=INT "${MINUTES}m" "$BIN/selfplay" --config configs/cpu.toml \
        --model models/reference.safetensors --out "$GAMES" --seed 11 --worker texel || [ $? = 124 ]
fi
"$BIN/gipf" tune --games "$GAMES" --write core/src/players/alphabeta/classic/weights.rs

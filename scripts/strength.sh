#!/usr/bin/env bash
# The learning-efficiency benchmark: trains from zero with the main job for
# MINUTES, then plays the newest checkpoint at a fixed time per action against
# fixed opponents (colour-swapped pairs of games from random openings), rates
# the run's checkpoints against fixed anchors, and writes a report.
#
#   scripts/strength.sh MINUTES [CONFIG]
#
# Settings (environment):
#   RUN=runs/strength-<date>   the run folder (an existing one is resumed)
#   MOVETIME=250               milliseconds per action of the checkpoint
#   TREE=                      keep or fresh: whether the checkpoint keeps its
#                              tree between actions (default: keeps it)
#   GAMES=40                   games per opponent
#   OPPONENTS="uct:10000 alphabeta:2 alphabeta:3 alphabeta:4 alphabeta:250ms classic:250ms"
#                              (the easy ones, random greedy alphabeta:1, on request)
#   MID_OPPONENTS="uct:10000 alphabeta:2"  played by the checkpoint that was
#                              newest at half time (none: "")
#   LATE_OPPONENTS="alphabeta:3"  played by two more late checkpoints (the
#                              newest kept at or below 90% and 80% of the
#                              newest's step), so that an arm is judged on
#                              three late checkpoints, not one (none: "")
#   CURVE_POINTS=6             checkpoints rated for the Elo curve (0: no curve)
#   CURVE_SIMS=64 CURVE_GAMES=20 CURVE_ANCHORS="alphabeta:2 alphabeta:3 classic:3"
#   THREADS=2                  games played at once
#   TRAIN=1                    0 skips training (measure an existing run)
# Output: RUN/report/strength.md (the table, with 95% intervals) and
# RUN/report/elo.png (the curve). Run it with nothing else running: the checkpoint's
# budget is wall-clock time.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || ! [[ "$1" =~ ^[0-9]+$ ]]; then
    echo "usage: scripts/strength.sh MINUTES [CONFIG]" >&2
    exit 2
fi
MINUTES="$1"
CONFIG="${2:-configs/cpu.toml}"
RUN="${RUN:-runs/strength-$(date +%Y%m%d-%H%M%S)}"
MOVETIME="${MOVETIME:-250}"
TREE="${TREE:-}"
GAMES="${GAMES:-40}"
OPPONENTS="${OPPONENTS:-uct:10000 alphabeta:2 alphabeta:3 alphabeta:4 alphabeta:250ms classic:250ms}"
CURVE_POINTS="${CURVE_POINTS:-6}"
CURVE_SIMS="${CURVE_SIMS:-64}"
CURVE_GAMES="${CURVE_GAMES:-20}"
CURVE_ANCHORS="${CURVE_ANCHORS:-alphabeta:2 alphabeta:3 classic:3}"
MID_OPPONENTS="${MID_OPPONENTS-uct:10000 alphabeta:2}"
LATE_OPPONENTS="${LATE_OPPONENTS-alphabeta:3}"
THREADS="${THREADS:-2}"
TRAIN="${TRAIN:-1}"

scripts/setup-torch.sh
cargo build --release --workspace --locked
GIPF="${CARGO_TARGET_DIR:-target}/release/gipf"
mkdir -p "$RUN/report"
newest_checkpoint() { ls "$RUN"/models/step-*.safetensors | sort | tail -n 1; }

if [ "$TRAIN" = 1 ]; then
    echo "strength: training $MINUTES minutes with $CONFIG in $RUN" >&2
    # At half time the newest checkpoint is kept aside for the midpoint figures.
    (
        sleep $((MINUTES * 30))
        stem="$(newest_checkpoint)"
        stem="${stem%.safetensors}"
        for ext in safetensors json; do cp "$stem.$ext" "$RUN/report/midpoint-$(basename "$stem").$ext"; done
    ) &
    snapshot=$!
    # The loop resumes from its files, so stopping it only loses the work in flight.
    timeout --signal=INT "${MINUTES}m" "$GIPF" loop --config "$CONFIG" --run "$RUN" || [ $? -eq 124 ]
    kill "$snapshot" 2>/dev/null || true
fi

report="$RUN/report/strength.md"
# measure CHECKPOINT OPPONENTS...: one table row per opponent.
measure() {
    local checkpoint="$1"
    shift
    echo "| opponent | wins | losses | draws | score | Elo | ms per action, A / opponent (mean, max) |"
    echo "|---|---|---|---|---|---|---|"
    for opponent in "$@"; do
        echo "strength: $(basename "$checkpoint") against $opponent" >&2
        out="$("$GIPF" arena "$checkpoint@${MOVETIME}ms${TREE:+,$TREE}" "$opponent" --games "$GAMES" --threads "$THREADS" --config "$CONFIG")"
        echo "$out" >&2
        # "A 12 wins, 8 losses, 0 draws (length cap); score 60.0% [38.7%, 78.1%]; Elo +70 [-80, +220] (95%)"
        line="$(echo "$out" | grep '^A .* wins')"
        wins="$(echo "$line" | sed -E 's/^A ([0-9]+) wins.*/\1/')"
        losses="$(echo "$line" | sed -E 's/.* ([0-9]+) losses.*/\1/')"
        draws="$(echo "$line" | sed -E 's/.* ([0-9]+) draws.*/\1/')"
        score="$(echo "$line" | sed -E 's/.*score ([^;]+);.*/\1/')"
        elo="$(echo "$line" | sed -E 's/.*Elo ([^(]+) \(95%\).*/\1/')"
        # "A per action: mean 251.3 ms, max 260.1 ms"
        times="$(echo "$out" | sed -nE 's/^[AB] per action: mean ([0-9.]+) ms, max ([0-9.]+) ms/\1, \2/p' | paste -sd/ | sed 's|/| / |')"
        echo "| \`$opponent\` | $wins | $losses | $draws | $score | $elo | $times |"
    done
}

newest="$(newest_checkpoint)"
{
    echo "# Strength of $RUN"
    echo
    echo "Config \`$CONFIG\`, $MINUTES minutes of training; newest checkpoint \`$(basename "$newest" .safetensors)\`,"
    echo "$MOVETIME ms per action${TREE:+ ($TREE tree)}, $GAMES games per opponent in colour-swapped pairs."
    echo "Intervals are 95%."
    echo
} > "$report"
# shellcheck disable=SC2086 # opponent lists are split on spaces
measure "$newest" $OPPONENTS >> "$report"
midpoint="$(ls "$RUN"/report/midpoint-step-*.safetensors 2>/dev/null | tail -n 1 || true)"
if [ -n "$MID_OPPONENTS" ] && [ -n "$midpoint" ]; then
    {
        echo
        echo "## At half time"
        echo
        echo "\`$(basename "$midpoint" .safetensors)\`, the newest checkpoint after $((MINUTES / 2)) minutes, as above."
        echo
        # shellcheck disable=SC2086
        measure "$midpoint" $MID_OPPONENTS
    } >> "$report"
fi

# The newest checkpoint at or below PERCENT% of the newest's step.
checkpoint_at() {
    local newest_step="$1" percent="$2" file step found=""
    for file in "$RUN"/models/step-*.safetensors; do
        step=$((10#$(basename "$file" .safetensors | sed 's/^step-//')))
        [ $((step * 100)) -le $((newest_step * percent)) ] && found="$file"
    done
    echo "$found"
}
if [ -n "$LATE_OPPONENTS" ]; then
    newest_step=$((10#$(basename "$newest" .safetensors | sed 's/^step-//')))
    for percent in 90 80; do
        late="$(checkpoint_at "$newest_step" "$percent")"
        [ -n "$late" ] || continue
        {
            echo
            echo "## A late checkpoint: \`$(basename "$late" .safetensors)\` (at or below $percent% of the newest's steps)"
            echo
            # shellcheck disable=SC2086
            measure "$late" $LATE_OPPONENTS
        } >> "$report"
    done
fi

if [ "$CURVE_POINTS" -gt 0 ]; then
    anchors=()
    for a in $CURVE_ANCHORS; do anchors+=(--anchor "$a"); done
    echo "strength: rating $CURVE_POINTS checkpoints spread by step against $CURVE_ANCHORS" >&2
    ratings="$("$GIPF" ratings --run "$RUN" --points "$CURVE_POINTS" --opponents 1 "${anchors[@]}" \
        --sims "$CURVE_SIMS" --games "$CURVE_GAMES" --threads "$THREADS" --config "$CONFIG")"
    echo "$ratings" >&2
    cp "$RUN/arena/ratings.png" "$RUN/report/elo.png"
    {
        echo
        echo "## Elo curve"
        echo
        echo "$CURVE_POINTS checkpoints spread evenly by step, at $CURVE_SIMS simulations per action, $CURVE_GAMES games against"
        echo "each anchor and the previous rated checkpoint; the first anchor is 0 Elo. Plot: \`elo.png\`."
        echo
        echo '```'
        echo "$ratings" | grep -v '^wrote'
        echo '```'
    } >> "$report"
fi
echo "strength: wrote $report" >&2
cat "$report"

#!/usr/bin/env bash
# The compute–strength curve of the model lineage: every generation in
# models/ (reference, tip, history/) and the runs from zero that were the
# reference before the lineage began (their weights from this repository's
# history), rated against fixed anchors and the model before, by the samples
# their training read (`gipf ratings --lineage`). The matches are kept in
# models/arena/matches.jsonl, so that a later curve plays only the new
# generations' matches; the ratings go to models/arena/ratings-LABEL.jsonl,
# the plot to docs/lineage-elo-LABEL.png (LABEL: the budget, as 400sims or
# 250ms), and a Markdown table with the Elo per doubling to standard output.
#
#   scripts/curve.sh
#
# Settings (environment):
#   BUDGET=400     per action: simulations, or a time such as 250ms. In
#                  simulations against anchors of fixed depth the result does
#                  not depend on the machine's load (a curve can run beside
#                  training); a time needs the machine to itself.
#   ANCHORS="classic:3 classic:5"   fixed players every model plays
#   OPPONENTS=1    the generations before it each model plays (0: the
#                  anchors alone, for a curve at a time per action)
#   GAMES=20 THREADS=1 NICE=0 SEED=1
#   ZERO="beeac1a 46235a4 f40d1d5 f924825"   commits whose
#                  models/reference.* was a run from zero (1 and 2 hours)
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET="${BUDGET:-400}"
ANCHORS="${ANCHORS:-classic:3 classic:5}"
OPPONENTS="${OPPONENTS:-1}"
GAMES="${GAMES:-20}"
THREADS="${THREADS:-1}"
NICE="${NICE:-0}"
SEED="${SEED:-1}"
ZERO="${ZERO:-beeac1a 46235a4 f40d1d5 f924825}"
WORK="runs/curve/models"

scripts/setup-torch.sh
cargo build --release --workspace --locked
GIPF="${CARGO_TARGET_DIR:-target}/release/gipf"
case "$BUDGET" in
    *ms) budget=(--movetime "${BUDGET%ms}") label="$BUDGET" ;;
    *) budget=(--sims "$BUDGET") label="${BUDGET}sims" ;;
esac

# The models to rate, each under the label the table gives it.
rm -rf "$WORK" && mkdir -p "$WORK/history" "$WORK/arena" models/arena
labels="$WORK/labels.tsv"
: > "$labels"
add() { # add FILE_STEM_SOURCE DESTINATION LABEL (weights and description)
    cp "$1.safetensors" "$2.safetensors" && cp "$1.json" "$2.json"
    printf '%s\t%s\n' "$(sha256sum "$2.safetensors" | cut -c1-8)" "$3" >> "$labels"
}
for name in reference tip; do
    [ -f "models/$name.safetensors" ] && add "models/$name" "$WORK/$name" "$name"
done
for weights in models/history/*.safetensors; do
    [ -f "$weights" ] && add "${weights%.safetensors}" "$WORK/history/$(basename "${weights%.safetensors}")" "an older generation"
done
for commit in $ZERO; do
    git show "$commit:models/reference.safetensors" > "$WORK/history/zero-$commit.safetensors"
    git show "$commit:models/reference.json" > "$WORK/history/zero-$commit.json"
    printf '%s\t%s\n' "$(sha256sum "$WORK/history/zero-$commit.safetensors" | cut -c1-8)" \
        "a run from zero (the reference at $commit)" >> "$labels"
done
[ -f models/arena/matches.jsonl ] && cp models/arena/matches.jsonl "$WORK/arena/"
# The matches played go back to models/arena, a rating cut short's too.
trap 'cp "$WORK/arena/matches.jsonl" models/arena/ 2>/dev/null || true' EXIT

anchors=()
for a in $ANCHORS; do anchors+=(--anchor "$a"); done
nice -n "$NICE" "$GIPF" ratings --lineage "$WORK" --opponents "$OPPONENTS" "${anchors[@]}" "${budget[@]}" \
    --games "$GAMES" --threads "$THREADS" --seed "$SEED" > "$WORK/ratings.txt"
cp "$WORK/arena/ratings.jsonl" "models/arena/ratings-$label.jsonl"
cp "$WORK/arena/ratings.png" "docs/lineage-elo-$label.png"

python3 - "$WORK/arena/ratings.jsonl" "$labels" "${budget[*]}" "$GAMES" <<'EOF'
import json, sys
ratings = [json.loads(line) for line in open(sys.argv[1])]
labels = {}
for line in open(sys.argv[2]):
    sha, label = line.rstrip("\n").split("\t")
    labels[sha] = f"{labels[sha]} and {label}" if sha in labels else label
print(f"`gipf ratings {sys.argv[3]}`, {sys.argv[4]} games a match; Elo with 95% intervals, the first anchor at 0.\n")
print("| model | what it is | samples read | Elo (95%) |")
print("|---|---|---|---|")
for r in ratings:
    read = r.get("samples_read")
    what = "anchor" if read is None else labels.get(r["checkpoint"].rsplit("-", 1)[-1], "")
    samples = "" if read is None else f"{read / 1e6:.2f} M"
    print(f"| `{r['checkpoint']}` | {what} | {samples} | {r['elo']:+.0f} ± {r['margin']:.0f} |")
EOF
grep '^Elo per doubling' "$WORK/ratings.txt" || true

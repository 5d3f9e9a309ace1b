#!/usr/bin/env bash
# One leg of the model lineage, and its gate: `gipf loop --from reference`
# (the newest generation, models/reference.*) for MINUTES of training in
# runs/leg-N, then the leg's newest checkpoint against the reference at
# MOVETIME ms per action over GAMES colour-swapped games. The leg is
# promoted (its checkpoint becomes models/reference.*, the old reference
# moves to models/history/) only when the lower end of the score's 95%
# interval is above 50%. Every leg, promoted or not, gets a row in the
# lineage table of models/README.md.
#
#   scripts/leg.sh N [CONFIG]
#
# Settings (environment):
#   MINUTES=120    training time of the leg; a leg stopped early (the session
#                  ended) resumes for the minutes its checkpoints have not yet
#                  counted (their lineage's hours)
#   GAMES=200 MOVETIME=250 THREADS=2   the gate (run it on a quiet machine)
#   LEG=1 GATE=1   0 skips the training or the gate
#   NICE=0         the loop's niceness, when other work shares the machine
#   CANDIDATE=     the checkpoint to gate (default: the leg's newest), e.g. a
#                  leg's checkpoint kept in models/candidates/ for a later session
#   HISTORY=4      older generations' weights kept in models/history/
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || ! [[ "$1" =~ ^[0-9]+$ ]]; then
    echo "usage: scripts/leg.sh N [CONFIG]" >&2
    exit 2
fi
N="$1"
CONFIG="${2:-configs/cpu.toml}"
RUN="runs/leg-$N"
MINUTES="${MINUTES:-120}"
GAMES="${GAMES:-200}"
MOVETIME="${MOVETIME:-250}"
THREADS="${THREADS:-2}"
LEG="${LEG:-1}"
GATE="${GATE:-1}"
NICE="${NICE:-0}"
HISTORY="${HISTORY:-4}"

scripts/setup-torch.sh
cargo build --release --workspace --locked
GIPF="${CARGO_TARGET_DIR:-target}/release/gipf"
mkdir -p "$RUN/report"
newest_checkpoint() { ls "$RUN"/models/step-*.safetensors 2>/dev/null | sort | tail -n 1; }
# json FILE EXPRESSION: a value of a checkpoint's description (d), in Python.
json() { python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"; }

if [ "$LEG" = 1 ]; then
    done_minutes=0
    if [ -n "$(newest_checkpoint)" ]; then
        done_minutes="$(json "$(newest_checkpoint | sed 's/safetensors$/json/')" "int(d['lineage']['run']['hours'] * 60)")"
    fi
    left=$((MINUTES - done_minutes))
    if [ "$left" -gt 0 ]; then
        echo "leg $N: training $left minutes from the reference with $CONFIG in $RUN" >&2
        # One SIGTERM, to the loop alone: it writes its games, saves its steps and exits.
        nice -n "$NICE" "$GIPF" loop --config "$CONFIG" --run "$RUN" --from reference &
        loop=$!
        (sleep $((left * 60)) && kill -TERM "$loop" 2>/dev/null) &
        timer=$!
        status=0
        wait "$loop" || status=$?
        kill "$timer" 2>/dev/null || true
        [ "$status" -eq 0 ] || { echo "leg $N: the loop failed ($status)" >&2; exit 1; }
    fi
fi
[ "$GATE" = 1 ] || exit 0

candidate="${CANDIDATE:-$(newest_checkpoint)}"
[ -n "$candidate" ] || { echo "leg $N: no checkpoint in $RUN/models" >&2; exit 1; }
gate="$RUN/report/gate.txt"
echo "leg $N: gating $candidate against the reference, $GAMES games at ${MOVETIME} ms" >&2
"$GIPF" arena "$candidate@${MOVETIME}ms" "reference@${MOVETIME}ms" --games "$GAMES" --threads "$THREADS" \
    --config "$CONFIG" --seed "$N" | tee "$gate"
# "score 55.0% [48.1%, 61.7%]": the score and the interval's lower end.
score="$(sed -n 's/.*score \([0-9.]*\)% \[\([0-9.]*\)%.*/\1/p' "$gate")"
lower="$(sed -n 's/.*score \([0-9.]*\)% \[\([0-9.]*\)%.*/\2/p' "$gate")"
record="$(sed -n 's/^A \([0-9]*\) wins, \([0-9]*\) losses, \([0-9]*\) draws.*/\1-\2-\3/p' "$gate")"
promoted=0
if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 50 else 1)" "$lower"; then promoted=1; fi

description="${candidate%.safetensors}.json"
row="$(json "$description" "' | '.join([
    '$N', '\`$RUN\` step %d' % d['step'], d['lineage']['parent']['file'] + ' step %d' % d['lineage']['parent']['step'],
    '%.2f h, %s' % (d['lineage']['run']['hours'], d['lineage']['machine']),
    '%.2f M read, %.1f M drawn' % (d['lineage']['run']['samples_read'] / 1e6, d['lineage']['run']['samples_drawn'] / 1e6),
    '%.2f h, %.2f M read' % (d['lineage']['inherited']['hours'] + d['lineage']['run']['hours'],
        (d['lineage']['inherited']['samples_read'] + d['lineage']['run']['samples_read']) / 1e6),
    '$record, $score% [$lower%, …] at ${MOVETIME} ms',
    'promoted' if $promoted else 'not promoted'])")"
echo "leg $N: | $row |" >&2
python3 - "$row" <<'EOF'
import sys
path = "models/README.md"
text = open(path).read()
end = "<!-- lineage rows end -->"
assert end in text, f"{path} has no lineage table"
open(path, "w").write(text.replace(end, f"| {sys.argv[1]} |\n{end}"))
EOF

if [ "$promoted" = 1 ]; then
    mkdir -p models/history
    old_step="$(json models/reference.json "d['step']")"
    old_sha="$(sha256sum models/reference.safetensors | cut -c1-8)"
    for ext in safetensors json; do
        cp models/reference.$ext "models/history/step-$old_step-$old_sha.$ext"
        cp "${candidate%.safetensors}.$ext" "models/reference.$ext.tmp" && mv "models/reference.$ext.tmp" "models/reference.$ext"
    done
    # Bounded: the newest HISTORY older generations.
    ls -t models/history/*.safetensors | tail -n +$((HISTORY + 1)) | while read -r old; do
        rm -f "$old" "${old%.safetensors}.json"
    done
    echo "leg $N: promoted; rebuild (cargo build --release) to play the new reference" >&2
fi

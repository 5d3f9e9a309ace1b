#!/usr/bin/env bash
# One leg of the model lineage, and its gate. The leg trains for MINUTES
# with `gipf loop --from` the lineage's tip (models/tip.*, the newest leg's
# checkpoint with its optimizer state; the reference before the first leg)
# in runs/leg-N, and its newest checkpoint becomes the new tip: training
# continues from it whatever its gate says, as Leela Chess Zero's training
# runs go on between promotions. The gate plays the leg's checkpoint against
# the reference (models/reference.*, the model the programs play) over at
# most GAMES colour-swapped games at BUDGET per action; it is promoted (it
# becomes the reference, the old one moves to models/history/) when a
# sequential test finds it stronger (SPRT), or, with no verdict after GAMES
# games, when the lower end of the score's 95% interval is above 50%. Every
# gate, promoted or not, adds a row to the lineage's log, models/lineage.md.
#
#   scripts/leg.sh N [CONFIG]     (CONFIG: configs/lineage.toml, the CPU
#                                  config at the shipped model's shape)
#
# Settings (environment):
#   MINUTES=120    training time of the leg; a leg stopped early resumes for
#                  the minutes its checkpoints have not yet counted (their
#                  lineage's hours) while runs/leg-N is still there
#   GAMES=200 THREADS=2
#   BUDGET=400     the gate: BUDGET simulations per action (400: about 140 ms
#                  on a 2-core AMD EPYC), or a time such as 250ms. Where both
#                  sides have the same network shape, equal simulations are
#                  equal compute, and a gate in simulations gives the same
#                  result whatever else the machine runs; where the shapes
#                  differ (a grown network) the default is 250ms, equal
#                  time, and the gate needs the machine to itself.
#   SPRT=0,50      the gate stops early once a sequential probability ratio
#                  test between these Elo differences decides (alpha = beta
#                  = 0.05, `gipf arena --sprt`): at least 50 stronger is
#                  promoted, at most 0 is not; with no verdict after GAMES
#                  games the interval decides. SPRT= plays all GAMES games.
#   LEG=1 GATE=1   0 skips the training or the gate
#   NICE=0         the processes' niceness, when other work shares the machine
#   CANDIDATE=     the checkpoint to gate (default: the leg's newest, or the
#                  tip when runs/leg-N is gone)
#   HISTORY=4      older generations' weights kept in models/history/
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || ! [[ "$1" =~ ^[0-9]+$ ]]; then
    echo "usage: scripts/leg.sh N [CONFIG]" >&2
    exit 2
fi
N="$1"
CONFIG="${2:-configs/lineage.toml}"
RUN="runs/leg-$N"
MINUTES="${MINUTES:-120}"
GAMES="${GAMES:-200}"
THREADS="${THREADS:-2}"
SPRT="${SPRT-0,50}"
LEG="${LEG:-1}"
GATE="${GATE:-1}"
NICE="${NICE:-0}"
HISTORY="${HISTORY:-4}"

scripts/setup-torch.sh
cargo build --release --workspace --locked
GIPF="${CARGO_TARGET_DIR:-target}/release/gipf"
mkdir -p "$RUN/report"
# Nothing (not a failure) where the leg has no checkpoint (runs/leg-N gone).
newest_checkpoint() { { ls "$RUN"/models/step-*.safetensors 2>/dev/null || true; } | sort | tail -n 1; }
# json FILE EXPRESSION: a value of a checkpoint's description (d), in Python.
json() { python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"; }
from=reference
[ -f models/tip.safetensors ] && from=models/tip.safetensors

if [ "$LEG" = 1 ]; then
    done_minutes=0
    if [ -n "$(newest_checkpoint)" ]; then
        done_minutes="$(json "$(newest_checkpoint | sed 's/safetensors$/json/')" "int(d['lineage']['run']['hours'] * 60)")"
    fi
    left=$((MINUTES - done_minutes))
    if [ "$left" -gt 0 ]; then
        echo "leg $N: training $left minutes from $from with $CONFIG in $RUN" >&2
        # The defaults the leg's arm is told from, as they were when it ran.
        [ -f "$RUN/base.toml" ] || cp configs/cpu.toml "$RUN/base.toml"
        # One SIGTERM, to the loop alone: it writes its games, saves its steps and exits.
        nice -n "$NICE" "$GIPF" loop --config "$CONFIG" --run "$RUN" --from "$from" &
        loop=$!
        (sleep $((left * 60)) && kill -TERM "$loop" 2>/dev/null) &
        timer=$!
        status=0
        wait "$loop" || status=$?
        kill "$timer" 2>/dev/null || true
        [ "$status" -eq 0 ] || { echo "leg $N: the loop failed ($status)" >&2; exit 1; }
    fi
    newest="$(newest_checkpoint)"
    # The new tip, each file under a temporary name first.
    for ext in safetensors json optim; do
        if [ -f "${newest%.safetensors}.$ext" ]; then
            cp "${newest%.safetensors}.$ext" "models/tip.$ext.tmp" && mv "models/tip.$ext.tmp" "models/tip.$ext"
        else
            rm -f "models/tip.$ext"
        fi
    done
    echo "leg $N: $newest is the lineage's tip (models/tip.*)" >&2
fi
[ "$GATE" = 1 ] || exit 0

candidate="${CANDIDATE:-$(newest_checkpoint)}"
candidate="${candidate:-models/tip.safetensors}"
[ -n "$candidate" ] || { echo "leg $N: no checkpoint in $RUN/models" >&2; exit 1; }
gate="$RUN/report/gate.txt"
if [ -z "${BUDGET:-}" ]; then
    BUDGET=400
    same_shape="$(json "${candidate%.safetensors}.json" "d['network'] == json.load(open('models/reference.json'))['network']")"
    [ "$same_shape" = True ] || BUDGET=250ms
fi
echo "leg $N: gating $candidate against the reference, $GAMES games at $BUDGET" >&2
sprt=()
[ -n "$SPRT" ] && sprt=(--sprt "$SPRT")
nice -n "$NICE" "$GIPF" arena "$candidate@$BUDGET" "reference@$BUDGET" --games "$GAMES" --threads "$THREADS" \
    --config "$CONFIG" --seed "$N" "${sprt[@]}" | tee "$gate"
# "score 55.0% [48.1%, 61.7%]; Elo +35 [-13, +83] (95%)": the interval's
# lower end decides; the score and Elo with their intervals go in the row.
lower="$(sed -n 's/.*score [0-9.]*% \[\([0-9.]*\)%.*/\1/p' "$gate")"
scored="$(sed -n 's/.*score \(.*\) (95%).*/\1/p' "$gate" | sed 's/;/,/')"
record="$(sed -n 's/^A \([0-9]*\) wins, \([0-9]*\) losses, \([0-9]*\) draws.*/\1-\2-\3/p' "$gate")"
# "SPRT [0, 50]: LLR 2.95 (bounds -2.94, 2.94): A is stronger by at least 50 Elo"
verdict="$(sed -n 's/^SPRT \[.*\]: LLR .*): //p' "$gate")"
promoted=0
sprt_words=" (SPRT [${SPRT/,/, }]: ${verdict#A is })"
case "$verdict" in
    "A is stronger"*) promoted=1 ;;
    "A is not stronger"*) ;;
    *) sprt_words=""
       if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 50 else 1)" "$lower"; then promoted=1; fi ;;
esac

description="${candidate%.safetensors}.json"
# The arm: the config the candidate trained with (its description keeps
# it, so a gate after runs/leg-N is gone needs no copy of the leg's config file)
# as its differences from configs/cpu.toml as it was when the leg trained.
base=configs/cpu.toml
[ -f "$RUN/base.toml" ] && base="$RUN/base.toml"
arm="$(python3 - "$description" "$base" <<'EOF'
import json, sys, tomllib
def flat(table, prefix=""):
    for key, value in table.items():
        if isinstance(value, dict):
            yield from flat(value, f"{prefix}{key}.")
        else:
            # The description's numbers went through f32: 0.2 reads 0.200000003.
            yield f"{prefix}{key}", float(f"{value:.7g}") if isinstance(value, float) else value
leg = dict(flat(json.load(open(sys.argv[1]))["config"]))
base = dict(flat(tomllib.load(open(sys.argv[2], "rb"))))
toml = lambda value: str(value).lower() if isinstance(value, bool) else value
changed = [f"{key} = {toml(value)}" for key, value in leg.items() if base.get(key, value) != value]
print("configs/cpu.toml" + (" with " + ", ".join(changed) if changed else ""))
EOF
)"
budget_words="$BUDGET"
[[ "$BUDGET" =~ ^[0-9]+$ ]] && budget_words="$BUDGET simulations"
[[ "$BUDGET" =~ ^[0-9]+ms$ ]] && budget_words="${BUDGET%ms} ms per action"
row="$(json "$description" "' | '.join([
    '$N', '\`$RUN\` step %d ($arm)' % d['step'], '%s step %d (%s)' % (d['lineage']['parent']['file'], d['lineage']['parent']['step'], d['lineage']['parent']['sha256'][:8]),
    '%.2f h, %s' % (d['lineage']['run']['hours'], d['lineage']['machine']),
    '%.2f M read, %.1f M drawn' % (d['lineage']['run']['samples_read'] / 1e6, d['lineage']['run']['samples_drawn'] / 1e6),
    '%.2f h, %.2f M read' % (d['lineage']['inherited']['hours'] + d['lineage']['run']['hours'],
        (d['lineage']['inherited']['samples_read'] + d['lineage']['run']['samples_read']) / 1e6),
    '$record, $scored, at $budget_words$sprt_words',
    'promoted' if $promoted else 'not promoted'])")"
echo "leg $N: | $row |" >&2
python3 - "$row" <<'EOF'
import sys
path = "models/lineage.md"
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

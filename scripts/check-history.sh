#!/usr/bin/env bash
# Fails when a tracked file outside the research log speaks of how the
# project was developed rather than of what a user does: the machines it was
# developed and measured on, the order of the work, the working sessions,
# the runs of the research log by name. The research log (docs/experiments.md
# and the lineage's record, models/lineage.md) is where that history belongs;
# a figure elsewhere names its hardware and date instead.
set -euo pipefail
cd "$(dirname "$0")/.."
LOG='^(docs/experiments\.md|models/lineage\.md|scripts/check-history\.sh)$'
# In every tracked text file.
PATTERNS=(
    '\blent\b|device tool|borrowed (GPU|machine)|development machine'
    'where (this|the) project (is|was) developed|developed (here|on this)'
    "(the|this) project's (own )?(2-core |CPU |GPU )*machine"
    '(on|from) (the|this) 2-core (CPU )?machine'
    'quiet machine|machine (was )?otherwise quiet'
    '\b(earlier|later|next|previous|same|this|one|another) session\b'
    "session's machine"
    '\bnice (5|19)\b'
    'runs/(h|v|e|g)[0-9]+\b|runs/leg-[0-9]+'
    'beside (leg [0-9]|a leg\b|the leg\b|a training run|a training leg)'
    "this project's (builds|test suites?|tests)"
    'run\(command=|carry=\['
)
# In the documentation: notebook phrasing.
DOC_PATTERNS=(
    '(^|[.(] )[Bb]efore, '
    '\b[Ll]eg [0-9]+\b'
)
# Tracked files as they are in the working tree (a file deleted there is gone).
files="$(git ls-files --cached --others --exclude-standard | grep -Ev "$LOG" | while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done)"
docs="$(grep -E '\.md$' <<<"$files" || true)"
found=0
for pattern in "${PATTERNS[@]}"; do
    if xargs -d '\n' grep -InE -- "$pattern" <<<"$files"; then found=1; fi
done
for pattern in "${DOC_PATTERNS[@]}"; do
    if xargs -d '\n' grep -InE -- "$pattern" <<<"$docs"; then found=1; fi
done
if [ "$found" = 1 ]; then
    echo "check-history.sh: the lines above speak of how the project was developed; say what a user does, name a figure's hardware and date, or move the history to docs/experiments.md" >&2
    exit 1
fi

#!/usr/bin/env bash
# Writes a folder that plays a checkpoint in a web browser as static files,
# for hosting anywhere: the board (scripts/web-build.sh) and the exported
# model (gipf export) in model/. To play locally, `gipf serve` does it all.
#
#   scripts/web-export.sh [CHECKPOINT] DIR
#
# Without a checkpoint, the reference model (models/reference.safetensors).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 1 ]; then
    set -- models/reference.safetensors "$1"
fi
if [ $# -ne 2 ]; then
    echo "usage: scripts/web-export.sh [CHECKPOINT] DIR" >&2
    exit 2
fi
scripts/setup-torch.sh
cargo build --release -p gipf --locked >&2
scripts/web-build.sh >/dev/null
mkdir -p "$2"
cp -r web/dist/. "$2/"
"${CARGO_TARGET_DIR:-target}/release/gipf" export "$1" --out "$2/model"
echo "wrote $2: serve it with any static file server (python3 -m http.server -d $2)" >&2

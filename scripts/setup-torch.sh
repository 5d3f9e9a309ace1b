#!/usr/bin/env bash
# Installs LibTorch (the PyPI wheel torch==$TORCH_VERSION, with tensorboard for
# reading event files, and onnxruntime for play and the exports' check) into a
# per-user cache folder keyed by the torch version, once; links the wheel's
# torch/ folder at .torch in the checkout, where .cargo/config.toml points
# LIBTORCH, and ONNX Runtime's library at .onnxruntime, where play loads it.
# Idempotent: a second run does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH_VERSION="${TORCH_VERSION:-2.13.0}"
. scripts/cached-venv.sh
cached_venv "torch-$TORCH_VERSION" "; about 3 GB to download" "torch==$TORCH_VERSION" tensorboard
# ONNX Runtime: its library runs play's fp32 forward passes on a CPU, its
# Python module checks exported models in the tests.
ORT_VERSION=1.32.0
if [ ! -f "$VENV/.onnxruntime-$ORT_VERSION" ]; then
    "$VENV/bin/python" -m pip install --quiet "onnxruntime==$ORT_VERSION" >&2
    touch "$VENV/.onnxruntime-$ORT_VERSION"
fi
TORCH_DIR="$("$VENV/bin/python" -c 'import os, torch; print(os.path.dirname(torch.__file__))')"
ORT_LIB="$(ls "$VENV"/lib/python3*/site-packages/onnxruntime/capi/libonnxruntime.so.* 2>/dev/null | head -1 || true)"
if [ -z "$ORT_LIB" ]; then
    echo "setup-torch.sh: the onnxruntime wheel holds no libonnxruntime.so: play runs on LibTorch" >&2
elif [ "$(readlink .onnxruntime 2>/dev/null)" != "$ORT_LIB" ]; then
    ln -sfn "$ORT_LIB" .onnxruntime
fi
if [ "$(readlink .torch 2>/dev/null)" != "$TORCH_DIR" ]; then
    ln -sfn "$TORCH_DIR" .torch
fi
# The environment's Python, for gipf export and the tests that load exported
# models (a wrapper: a symlink would hide the environment from Python).
WRAPPER="#!/bin/sh
exec \"$VENV/bin/python\" \"\$@\""
if [ ! -x .python ] || [ -L .python ] || [ "$(cat .python)" != "$WRAPPER" ]; then
    rm -f .python
    printf '%s\n' "$WRAPPER" > .python
    chmod +x .python
fi

#!/usr/bin/env bash
# Builds the Python package (python/: maturin over gipf-core) and installs it
# into the project's Python environment (.python, from setup-torch.sh), with
# what its tests need (pytest, PettingZoo, safetensors). Run again after a change to
# python/ or core/: it rebuilds what changed. The build lints with the
# caller's RUSTC_WORKSPACE_WRAPPER (scripts/test.sh: clippy, warnings denied).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-torch.sh
if ! ./.python -c "import maturin, pytest, pettingzoo, gymnasium, safetensors" 2>/dev/null; then
    echo "setup-python.sh: installing maturin, pytest, pettingzoo and safetensors (once)" >&2
    ./.python -m pip install --quiet "maturin>=1.7,<2" "pytest>=7" "pettingzoo>=1.24" "gymnasium>=0.28" \
        "safetensors>=0.4" >&2
fi
# OpenSpiel, where its wheel installs on this Python (its tests skip, saying
# so, where it does not).
if ! ./.python -c "import pyspiel" 2>/dev/null && ! ./.python -m pip install --quiet open_spiel >&2; then
    echo "setup-python.sh: open_spiel does not install on this Python: its tests will be skipped" >&2
fi
# Its own build folder beside the workspace's: another lock file, another
# profile. The environment's programs (maturin) first on the PATH.
CARGO_TARGET_DIR="$PWD/${CARGO_TARGET_DIR:-target}/python" \
    PATH="$(./.python -c 'import os, sys; print(os.path.join(sys.prefix, "bin"))'):$PATH" \
    ./.python -m pip install --quiet --no-build-isolation --no-deps ./python >&2

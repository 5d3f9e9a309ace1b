#!/usr/bin/env bash
# The engine under load: LINES (default 100,000) random and malformed
# protocol lines into `gipf engine --player random`; checks one reply per
# line, no exit, memory flat, and prints the figures (tests/engine_load.rs).
#
#   scripts/engine-load.sh [LINES]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-torch.sh
ENGINE_LINES="${1:-100000}" cargo test --locked --test integration -- engine_load:: --nocapture 2>&1 | grep -E "lines,|test result|panicked"

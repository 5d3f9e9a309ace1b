#!/usr/bin/env bash
# Builds the release binaries and runs the main job. Arguments go to `gipf`;
# without any, it shows the standard start and measures the rules' speed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-torch.sh
cargo build --release --workspace --locked
if [ $# -eq 0 ]; then
    ./target/release/gipf rules --variant standard
    ./target/release/gipf bench rules
else
    ./target/release/gipf "$@"
fi

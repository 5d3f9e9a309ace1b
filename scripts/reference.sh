#!/usr/bin/env bash
# Writes docs/reference.md's generated sections (every command, flag and
# configuration key) from the code: the tests that check the page, run with
# GIPF_WRITE_REFERENCE=1, write what they would compare. Run it after
# changing a command's arguments, a configuration key, its doc comment, its
# default in configs/cpu.toml or its range in Config::validate.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-torch.sh
GIPF_WRITE_REFERENCE=1 cargo test --workspace --locked reference_page_is_current

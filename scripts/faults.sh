#!/usr/bin/env bash
# Fault injection into the training loop (tests/faults.rs), the long
# campaign: `gipf loop` killed with SIGKILL at KILLS (default 50) random
# moments and restarted, checking after each kill that no checkpoint or
# stored game was lost or damaged; a run folder on a 2 MB tmpfs that fills
# up (a clear error, no partial file, the loop resumes once space is freed);
# a read-only run folder (a clear error, nothing changed); a newest
# checkpoint cut to nothing and a garbage game file (passed over with
# warnings); the disk filling at FILLS (default 30) random points of the
# loop's writes, each in a mount namespace of its own; the loop stopped by
# coreutils `timeout` at STOPS (default 30) random moments. The mounts need
# root. Prints the outcome of each.
#
#   scripts/faults.sh [KILLS [FILLS [STOPS]]]
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "faults.sh: run as root (it mounts a tmpfs and a read-only folder)" >&2; exit 1; }
scripts/setup-torch.sh
FAULT_KILLS="${1:-50}" FAULT_FILLS="${2:-30}" FAULT_TIMEOUTS="${3:-30}" cargo test --locked --test integration -- faults:: --include-ignored --nocapture --test-threads 1 2>&1 \
    | grep -E "kills survived|full disk|read-only|timeout:|^test |test result|panicked"

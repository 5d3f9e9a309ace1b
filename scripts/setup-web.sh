#!/usr/bin/env bash
# Checks and installs what the web board's build needs: Node.js with npm
# (installed by you: a clear error when missing), the wasm32-unknown-unknown
# target (rustup) and the npm packages of web/package-lock.json
# (onnxruntime-web, and playwright-core, which drives a system Chromium and
# never downloads a browser). Idempotent.
#
#   scripts/setup-web.sh              # for the page (scripts/web-build.sh, gipf serve)
#   scripts/setup-web.sh --browser    # also Chromium, for the browser tests
#
# With --browser (the test command), Node.js, npm and Chromium are installed
# from Debian with apt-get where missing, as root or with sudo, saying so.
# Without it nothing is installed outside the checkout and the Rust toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."
BROWSER=0
[ "${1:-}" = --browser ] && BROWSER=1
missing=()
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
if [ "$BROWSER" = 1 ]; then
    [ -x "${CHROMIUM:-/usr/bin/chromium}" ] || missing+=(chromium)
    if [ ${#missing[@]} -gt 0 ]; then
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        echo "setup-web.sh: the browser tests need ${missing[*]}: installing them with $sudo apt-get" >&2
        $sudo apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
    fi
elif [ ${#missing[@]} -gt 0 ]; then
    echo "setup-web.sh: building the web board needs Node.js 18 or newer with npm, and none is on the PATH." >&2
    echo "  Install it (Debian and Ubuntu: sudo apt-get install nodejs npm; elsewhere: https://nodejs.org)," >&2
    echo "  or serve a page built on another machine: gipf serve --page DIR (the web/dist/ of scripts/web-build.sh)." >&2
    exit 1
fi
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown >&2
if [ ! -f web/node_modules/.package-lock.json ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
    (cd web && npm ci --no-audit --no-fund >&2)
fi

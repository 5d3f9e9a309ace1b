#!/usr/bin/env bash
# Installs what the web board's build and browser tests need, once: Node.js
# with npm and Chromium from Debian (apt-get, as root or with sudo), the
# wasm32-unknown-unknown target (rustup), and the npm packages of
# web/package-lock.json (onnxruntime-web, playwright-core, which drives the
# system's Chromium and never downloads a browser). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "setup-web.sh: installing ${missing[*]} with apt-get" >&2
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
fi
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown >&2
if [ ! -f web/node_modules/.package-lock.json ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
    (cd web && npm ci --no-audit --no-fund >&2)
fi

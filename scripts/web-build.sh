#!/usr/bin/env bash
# Builds the web board's static files into web/dist/: the engine compiled to
# WebAssembly (web/engine, release, no debug info), onnxruntime-web from npm
# and the page (scripts/setup-web.sh checks what it needs: Node.js, no
# browser). Offline afterwards: nothing the page loads comes from elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-web.sh
CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=true \
    cargo build -p gipf-web --release --target wasm32-unknown-unknown --locked >&2
rm -rf web/dist.tmp
mkdir -p web/dist.tmp/ort
cp web/index.html web/app.js web/worker.js web/run.html web/run.js web/style.css web/dist.tmp/
cp "${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/release/gipf_web.wasm" web/dist.tmp/engine.wasm
cp web/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs \
    web/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.mjs \
    web/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm web/dist.tmp/ort/
rm -rf web/dist
mv web/dist.tmp web/dist
echo web/dist

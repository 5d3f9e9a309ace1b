#!/usr/bin/env bash
# Builds the release binaries against another LibTorch release (2.11 by
# default), for a GPU machine whose PyTorch is fixed (a cluster image, a
# container) and which has no Rust toolchain, and gathers them, stripped,
# with the configs and scripts/gpu-check.sh into the git-ignored folder
# .gpu/ (under 64 MiB), to be copied there:
#
#   scripts/gpu-bundle.sh            # then, there: .gpu/gpu-check.sh
#
# The same code builds against any LibTorch with the tch release made for it
# (tch 0.26 for LibTorch 2.13, the default; 0.24 for 2.11): a copy of the
# sources with that one requirement changed, built in its own target folder.
# TORCH_VERSION and TCH_VERSION choose another pair. Idempotent: the torch
# install happens once, later builds are incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH_VERSION="${TORCH_VERSION:-2.11.0}"
TCH_VERSION="${TCH_VERSION:-0.24.0}"
. scripts/cached-venv.sh
BUILD="$CACHE/build-torch-$TORCH_VERSION"
OUT=.gpu

cached_venv "torch-$TORCH_VERSION" "; about 3 GB to download" "torch==$TORCH_VERSION"
TORCH_DIR="$("$VENV/bin/python" -c 'import os, torch; print(os.path.dirname(torch.__file__))')"

# A copy of the sources (tracked and new files, not ignored ones) with the
# tch requirement for this LibTorch.
rm -rf "$BUILD/src"
mkdir -p "$BUILD/src"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$BUILD/src"
sed -i -E "s/^tch = \"[^\"]+\"/tch = \"=$TCH_VERSION\"/" "$BUILD/src/Cargo.toml"
grep -q "^tch = \"=$TCH_VERSION\"" "$BUILD/src/Cargo.toml" || { echo "gpu-bundle: no tch requirement found to change" >&2; exit 1; }
(cd "$BUILD/src" && LIBTORCH="$TORCH_DIR" CARGO_TARGET_DIR="$BUILD/target" cargo build --release --workspace)

rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/configs"
for bin in gipf selfplay trainer; do
    strip -o "$OUT/bin/$bin" "$BUILD/target/release/$bin"
done
cp configs/*.toml "$OUT/configs/"
cp scripts/gpu-check.sh "$OUT/"
echo "torch $TORCH_VERSION, tch $TCH_VERSION, built $(date -u +%FT%TZ) from $(git rev-parse --short HEAD)" >"$OUT/BUILD"
size=$(du -sm "$OUT" | cut -f1)
echo "gpu-bundle: $OUT holds $size MiB" >&2
[ "$size" -lt 64 ] || { echo "gpu-bundle: $OUT is over 64 MiB" >&2; exit 1; }

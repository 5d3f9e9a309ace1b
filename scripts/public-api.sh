#!/usr/bin/env bash
# The public API of the library crates (gipf-core, gipf), one item a line:
# every public module, type, trait, function, constant and inherent
# method, by its path, from rustdoc's JSON output (nightly Rust, which
# scripts/fuzz.sh also uses). For reviewing what a change adds to or
# removes from what users can build on:
#
#   scripts/public-api.sh > after.txt; diff before.txt after.txt
#
# Settings (environment): CRATES="gipf-core gipf".
set -euo pipefail
cd "$(dirname "$0")/.."
CRATES="${CRATES:-gipf-core gipf}"
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal >&2
scripts/setup-torch.sh >&2
TARGET="${CARGO_TARGET_DIR:-target}/public-api"
for crate in $CRATES; do
    cargo +nightly rustdoc -q -p "$crate" --lib --target-dir "$TARGET" -- -Z unstable-options --output-format json >&2
    ./.python - "$TARGET/doc/${crate//-/_}.json" <<'PY'
import json, sys

doc = json.load(open(sys.argv[1]))
index, paths = doc["index"], doc["paths"]
kinds = {"module", "struct", "enum", "trait", "function", "constant", "type_alias", "static", "macro", "union"}
items = set()
for id, summary in paths.items():
    if summary["crate_id"] == 0 and summary["kind"] in kinds and id in index:
        items.add(f'{summary["kind"]} {"::".join(summary["path"])}')
for item in index.values():
    impl = item["inner"].get("impl") if isinstance(item["inner"], dict) else None
    if not impl or impl.get("trait") is not None:
        continue
    target = impl["for"].get("resolved_path") if isinstance(impl["for"], dict) else None
    owner = paths.get(str(target["id"])) if target else None
    if not owner or owner["crate_id"] != 0:
        continue
    for member in impl["items"]:
        member = index.get(str(member))
        if member and member.get("visibility") == "public" and "function" in member["inner"]:
            items.add(f'method {"::".join(owner["path"])}::{member["name"]}')
print("\n".join(sorted(items)))
PY
done

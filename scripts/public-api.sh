#!/usr/bin/env bash
# The public API of the library crates (gipf-core, gipf), one item a line:
# every public module, type, trait, function, constant and inherent
# method, by the path a user writes (re-exports followed; a module of
# another crate re-exported is one line), from rustdoc's JSON output
# (nightly Rust, which scripts/fuzz.sh also uses). For reviewing what a change adds to or
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
index = doc["index"]
items = set()


def kind_of(item):
    return next(iter(item["inner"])) if isinstance(item["inner"], dict) else item["inner"]


def members(item, path):
    """The public inherent methods of a type, a trait's methods."""
    inner = item["inner"][kind_of(item)]
    for impl in inner.get("impls", []):
        impl = index.get(str(impl))
        if not impl or impl["inner"]["impl"].get("trait") is not None:
            continue
        for member in impl["inner"]["impl"]["items"]:
            member = index.get(str(member))
            if member and member.get("visibility") == "public" and kind_of(member) == "function":
                items.add(f"method {path}::{member['name']}")
    for member in inner.get("items", []) if kind_of(item) == "trait" else []:
        member = index.get(str(member))
        if member:
            items.add(f"method {path}::{member['name']}")


def item_at(item, path, seen):
    kind = kind_of(item)
    if kind == "module":
        items.add(f"module {path}")
        walk(item, path, seen)
    elif kind in ("struct", "enum", "trait", "union"):
        items.add(f"{kind} {path}")
        members(item, path)
    elif kind not in ("impl", "use"):
        items.add(f"{kind} {path}")


def walk(module, prefix, seen):
    if module["id"] in seen:
        return
    seen = seen | {module["id"]}
    for child in module["inner"]["module"]["items"]:
        child = index.get(str(child))
        if not child:
            continue
        use = child["inner"].get("use") if isinstance(child["inner"], dict) else None
        if use is None:
            item_at(child, f"{prefix}::{child['name']}", seen)
            continue
        target = index.get(str(use["id"])) if use["id"] is not None else None
        if use["is_glob"]:
            if target and kind_of(target) == "module":
                walk(target, prefix, seen)
            else:
                items.add(f"glob {prefix}::* = {use['source']}")
        elif target:
            item_at(target, f"{prefix}::{use['name']}", seen)
        else:
            items.add(f"re-export {prefix}::{use['name']} = {use['source']}")


root = index[str(doc["root"])]
walk(root, root["name"], set())
print("\n".join(sorted(items)))
PY
done

//! The module order each crate's `lib.rs` states is true: every module of
//! the crate is in it, and none uses a module beside it or after it (so
//! there is no import circle between modules), grouped imports
//! (`use crate::{a, b}`) included; and no two files of a folder import each
//! other (`use super::x` both ways).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Each module's level in the order that `lib`'s documentation states,
/// from the text `from` to the text `to` (groups separated by `←`).
fn stated_levels(lib: &Path, from: &str, to: &str) -> BTreeMap<String, usize> {
    let source = std::fs::read_to_string(lib).unwrap();
    let doc: String = source.lines().filter_map(|l| l.strip_prefix("//!")).collect::<Vec<_>>().join(" ");
    let start = doc.find(from).unwrap_or_else(|| panic!("{}: no {from:?}", lib.display()));
    let order = &doc[start..doc[start..].find(to).unwrap() + start + to.len()];
    let mut levels = BTreeMap::new();
    for (level, group) in order.split('←').enumerate() {
        for name in group.split('`').skip(1).step_by(2) {
            levels.insert(name.to_string(), level);
        }
    }
    levels
}

/// The code of `source`: its test module and comments left out (an item
/// marked `#[cfg(test)]` before the code ends hides nothing after it).
fn code(source: &str) -> String {
    let code = source.split("#[cfg(test)]\nmod tests").next().unwrap();
    code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// The first names after each `prefix` in `code`: `prefix::a` gives `a`,
/// `prefix::{a, b::c}` gives `a` and `b`.
fn names_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let ident = |s: &str| s.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut names = BTreeSet::new();
    for rest in code.split(prefix).skip(1) {
        match rest.strip_prefix('{') {
            Some(group) => {
                let (mut depth, mut item) = (0, String::new());
                for c in group.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            names.insert(ident(&item));
                            item.clear();
                            continue;
                        }
                        _ => {}
                    }
                    item.push(c);
                }
                names.insert(ident(&item));
            }
            None => {
                names.insert(ident(rest));
            }
        }
    }
    names.remove("");
    names
}

/// The `.rs` files of a module: the file, or every file under its folder.
fn files_of(path: &Path) -> Vec<PathBuf> {
    match path.is_dir() {
        false => vec![path.to_path_buf()],
        true => std::fs::read_dir(path).unwrap().flat_map(|e| files_of(&e.unwrap().path())).collect(),
    }
}

/// Checks the stated order of the crate in `src` (its `lib.rs`).
fn check_order(src: &Path, from: &str, to: &str) {
    let levels = stated_levels(&src.join("lib.rs"), from, to);
    let mut checked = 0;
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" || name == "bin" {
            continue;
        }
        let level = *levels.get(&name).unwrap_or_else(|| panic!("{} is not in lib.rs's stated order", path.display()));
        for file in files_of(&path) {
            for used in names_after(&code(&std::fs::read_to_string(&file).unwrap()), "crate::") {
                if let Some(&used_level) = levels.get(&used).filter(|_| used != name) {
                    assert!(used_level < level, "{} uses crate::{used}, stated beside or after it", file.display());
                }
            }
        }
        checked += 1;
    }
    assert!(checked >= levels.len().min(4), "{checked} modules checked in {}", src.display());
}

#[test]
fn the_librarys_modules_use_only_those_before_them() {
    check_order(&Path::new(ROOT).join("src"), "the core ←", "`train`");
}

#[test]
fn the_cores_modules_use_only_those_before_them() {
    check_order(&Path::new(ROOT).join("core/src"), "`bounds`, `rules` ←", "`cli`");
}

/// The grouped form is seen too.
#[test]
fn grouped_imports_are_read() {
    let names = names_after("use crate::{a, b::{c, d}, e::f};\nlet x = crate::g::h;", "crate::");
    assert_eq!(names, ["a", "b", "e", "g"].map(String::from).into());
}

/// No two files of a folder import each other.
#[test]
fn no_two_files_import_each_other() {
    let mut folders = vec![Path::new(ROOT).join("src"), Path::new(ROOT).join("core/src")];
    let mut pairs = 0;
    while let Some(folder) = folders.pop() {
        let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            uses.insert(name, names_after(&code(&std::fs::read_to_string(&path).unwrap()), "super::"));
        }
        for (file, used) in &uses {
            for other in used.iter().filter(|u| *u != file) {
                pairs += 1;
                let back = uses.get(other).is_some_and(|theirs| theirs.contains(file));
                assert!(!back, "{}: {file}.rs and {other}.rs import each other", folder.display());
            }
        }
    }
    assert!(pairs > 10, "{pairs} imports between sibling files checked");
}

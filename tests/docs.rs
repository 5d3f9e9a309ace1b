//! The documentation against the code: the reference page
//! (`docs/reference.md`) is what the code generates, every link of the
//! documentation reaches its file and heading, and the README stays short.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use gipf::config::{Config, DEFAULTS};

use crate::common::help_page::{cell, check_section, code_or_words, command_section, page};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `gipf` command and the configuration keys as the page gives them
/// (`selfplay`, `trainer` and `gipf-rules` are checked by their crates'
/// tests).
#[test]
fn reference_page_is_current() {
    let page = page(env!("CARGO_MANIFEST_DIR"));
    check_section(&page, "gipf", &command_section(Path::new(env!("CARGO_BIN_EXE_gipf")), "gipf"));
    check_section(&page, "config", &config_section());
}

/// A documented item of the code: its doc comment, and for a struct its
/// fields (name, doc comment, serde's name for it).
#[derive(Debug, Default)]
struct Item {
    doc: String,
    fields: Vec<(String, String, Option<String>, String)>,
}

/// Every `pub struct NAME {` of the library and the core, with the doc
/// comments of it and its `pub` fields (the configuration's tables are such
/// structs).
fn structs() -> BTreeMap<String, Vec<Item>> {
    let mut files = Vec::new();
    for dir in ["src", "core/src"] {
        rust_files(&root().join(dir), &mut files);
    }
    let mut found: BTreeMap<String, Vec<Item>> = BTreeMap::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let (mut doc, mut rename): (Vec<&str>, Option<String>) = (Vec::new(), None);
        let mut open: Option<(String, Item)> = None;
        for line in text.lines() {
            let trimmed = line.trim();
            if let Some(comment) = trimmed.strip_prefix("///") {
                doc.push(comment.trim());
            } else if trimmed.starts_with("#[") {
                if let Some(name) = trimmed.split("rename = \"").nth(1).and_then(|r| r.split('"').next()) {
                    rename = Some(name.to_string());
                }
            } else if let Some(name) = trimmed.strip_prefix("pub struct ").and_then(|r| r.strip_suffix(" {")) {
                open = Some((name.to_string(), Item { doc: words(&doc), fields: Vec::new() }));
                (doc, rename) = (Vec::new(), None);
            } else if trimmed == "}" && line.starts_with('}') {
                if let Some((name, item)) = open.take() {
                    found.entry(name).or_default().push(item);
                }
                doc.clear();
            } else if let (Some((_, item)), Some(field)) = (open.as_mut(), trimmed.strip_prefix("pub ")) {
                if let Some((name, kind)) = field.split_once(": ") {
                    let kind = kind.trim_end_matches(',').to_string();
                    item.fields.push((name.to_string(), words(&doc), rename.take(), kind));
                }
                doc.clear();
            } else {
                (doc, rename) = (Vec::new(), None);
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && !path.ends_with("bin") {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A doc comment's lines as one line of text, intra-doc links as code.
fn words(lines: &[&str]) -> String {
    let text = lines.iter().filter(|l| !l.is_empty()).copied().collect::<Vec<_>>().join(" ");
    text.replace("[`", "`").replace("`]", "`")
}

/// The one `pub struct NAME` of the sources.
fn one_struct<'a>(structs: &'a BTreeMap<String, Vec<Item>>, name: &str) -> &'a Item {
    let items = structs.get(name).unwrap_or_else(|| panic!("no pub struct {name} in src/ or core/src/"));
    assert_eq!(items.len(), 1, "pub struct {name} is defined more than once");
    &items[0]
}

/// The configuration the ranges are read from: the defaults, with the
/// keys that are checked only in generations in turn and with `[gate]`.
fn gated_defaults() -> Config {
    let mut table: toml::Table = DEFAULTS.parse().unwrap();
    let main_loop = table.get_mut("loop").and_then(|t| t.as_table_mut()).unwrap();
    main_loop.insert("workers".into(), toml::Value::Integer(0));
    main_loop.insert("games_per_generation".into(), toml::Value::Integer(40));
    let gate: toml::Table = "games = 40\nsimulations = 64\nthreshold = 0.55\nopening_actions = 4".parse().unwrap();
    table.insert("gate".into(), toml::Value::Table(gate));
    Config::parse(&toml::to_string(&table).unwrap()).unwrap()
}

/// The values a string key may take, as serde's error for another one
/// lists them (`one of `fp32`, `bf16`, ...`).
fn choices(section: &str, key: &str) -> Option<String> {
    let err = format!("{:#}", Config::parse(&format!("[{section}]\n{key} = \"?\"\n")).err()?);
    let listed = err.split("expected one of ").nth(1)?.lines().next()?;
    Some(format!("one of {listed}"))
}

/// The tables and keys of the configuration: each key's doc comment, its
/// value in `configs/cpu.toml` (the default) and `configs/gpu.toml`, and
/// the range `Config::validate` enforces.
fn config_section() -> String {
    let structs = structs();
    let item = |name: &str| one_struct(&structs, name);
    let gated = gated_defaults();
    let mut ranges = gipf::bounds::ranges_checked(|| {
        Config::parse(DEFAULTS).unwrap().validate().unwrap();
        gated.validate().unwrap();
    });
    let defaults: toml::Table = DEFAULTS.parse().unwrap();
    let gpu: toml::Table = std::fs::read_to_string(root().join("configs/gpu.toml")).unwrap().parse().unwrap();
    let value = |table: &toml::Table, section: &str, key: &str| {
        table.get(section).and_then(|t| t.get(key)).map(|v| format!("`{}`", cell(&v.to_string())))
    };
    // Every key the configuration has, as it serializes.
    let serialized = toml::Value::try_from(&gated).unwrap();
    let mut keys: HashSet<String> = serialized
        .as_table()
        .unwrap()
        .iter()
        .flat_map(|(section, t)| t.as_table().unwrap().keys().map(move |k| format!("{section}.{k}")))
        .collect();
    let mut undocumented = Vec::new();
    let mut out = String::new();
    for (field, _, rename, kind) in &item("Config").fields {
        let section = rename.clone().unwrap_or_else(|| field.clone());
        let kind = kind.trim_start_matches("Option<").trim_end_matches('>');
        let table = item(kind);
        out += &format!("### [{section}]\n\n{}\n\n", table.doc);
        out += "| key | meaning | default | `gpu.toml` | range |\n|---|---|---|---|---|\n";
        for (name, doc, _, kind) in &table.fields {
            let key = format!("{section}.{name}");
            keys.remove(&key);
            if doc.is_empty() {
                undocumented.push(key.clone());
            }
            let range = match ranges.iter().position(|r| r.key == key) {
                Some(i) => format!("`{}`", ranges.remove(i).range),
                None if kind.as_str() == "bool" => "`true`, `false`".to_string(),
                None => choices(&section, name).unwrap_or_default(),
            };
            let numeric =
                ["u8", "u32", "u64", "usize", "i32", "i64", "f32", "f64", "Option<u64>"].contains(&kind.as_str());
            assert!(!(numeric && range.is_empty()), "{key} is a number that Config::validate checks against no range");
            let default = value(&defaults, &section, name).unwrap_or_else(|| "none".into());
            let on_gpu = value(&gpu, &section, name).unwrap_or_default();
            out += &format!("| `{key}` | {} | {default} | {on_gpu} | {} |\n", cell(doc), code_or_words(&range));
        }
        out += "\n";
    }
    assert!(undocumented.is_empty(), "configuration keys without a doc comment: {undocumented:?}");
    assert!(keys.is_empty(), "configuration keys not found in the tables' structs: {keys:?}");
    let stray: Vec<&str> = ranges.iter().map(|r| r.key.as_str()).collect();
    assert!(stray.is_empty(), "ranges checked for keys the tables do not have: {stray:?}");
    out
}

/// Headings' anchors as GitHub makes them: lower case, only letters,
/// digits, spaces, `-` and `_` kept, spaces as `-`, a repeated one numbered.
fn anchors(markdown: &str) -> HashSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut anchors = HashSet::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if let Some(id) = line.split("id=\"").nth(1).and_then(|r| r.split('"').next()) {
            anchors.insert(id.to_string());
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let text = line.trim_start_matches('#').trim().to_lowercase();
        let slug: String = text
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_default();
        anchors.insert(if *n == 0 { slug.clone() } else { format!("{slug}-{n}") });
        *n += 1;
    }
    anchors
}

/// The repository's files: tracked, and new ones not ignored.
fn tracked() -> Vec<String> {
    let args = ["ls-files", "-z", "--cached", "--others", "--exclude-standard"];
    let out = std::process::Command::new("git").args(args).current_dir(root()).output().unwrap();
    assert!(out.status.success(), "git ls-files: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().split('\0').filter(|f| !f.is_empty()).map(String::from).collect()
}

/// The links of a Markdown text outside code: `[text](target)` and
/// `![alt](target)`, web addresses left out.
fn markdown_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced {
            continue;
        }
        // Inline code is not a link.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        for part in prose.split("](").skip(1) {
            let target = part.split(')').next().unwrap_or("").split(' ').next().unwrap_or("");
            if !target.contains("://") && !target.starts_with("mailto:") {
                links.push(target.to_string());
            }
        }
    }
    links
}

/// Mentions of a page by its path from the repository's root, in any
/// tracked text (`docs/playing.md#the-engine-protocol` in a docstring).
fn page_mentions(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for start in ["docs/", "models/"] {
        for (at, _) in text.match_indices(start) {
            if at > 0 && !text[..at].ends_with(|c: char| c.is_whitespace() || "`([\"'".contains(c)) {
                continue;
            }
            let rest = &text[at..];
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || "/._-#".contains(c))).unwrap_or(rest.len());
            let mention = rest[..end].trim_end_matches(['.', '/']);
            if mention.split('#').next().is_some_and(|path| path.ends_with(".md")) {
                found.push(mention.to_string());
            }
        }
    }
    found
}

/// Every link of every Markdown file, and every mention of a page in the
/// code and scripts, reaches an existing file, and its `#anchor` a heading
/// of that page.
#[test]
fn every_link_resolves() {
    let root = root();
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in tracked() {
        let path = root.join(&file);
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let from = path.parent().unwrap();
        let mut targets: Vec<(PathBuf, String)> = Vec::new();
        if file.ends_with(".md") {
            targets.extend(markdown_links(&text).into_iter().map(|t| (from.to_path_buf(), t)));
        }
        targets.extend(page_mentions(&text).into_iter().map(|t| (root.clone(), t)));
        for (base, target) in targets {
            checked += 1;
            let (file_part, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let linked = if file_part.is_empty() { path.clone() } else { base.join(file_part) };
            if !linked.exists() {
                broken.push(format!("{file}: {target} (no such file)"));
            } else if !anchor.is_empty() {
                let text = std::fs::read_to_string(&linked).unwrap_or_default();
                if !anchors(&text).contains(anchor) {
                    broken.push(format!("{file}: {target} (no such heading)"));
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} links found");
    assert!(broken.is_empty(), "links that reach nothing:\n{}", broken.join("\n"));
}

#[test]
fn slugs_are_githubs() {
    let page = "# Usage\n## Reviewing a game (`gipf analyse`)\n## The compute–strength curve\n### [train]\n## Usage\n";
    let made = anchors(page);
    for anchor in ["usage", "reviewing-a-game-gipf-analyse", "the-computestrength-curve", "train", "usage-1"] {
        assert!(made.contains(anchor), "{anchor}: {made:?}");
    }
    assert_eq!(markdown_links("[a](b.md#c) `[x](y)` ![p](q.png) [w](https://e.org)"), ["b.md#c", "q.png"]);
    assert_eq!(
        page_mentions("see docs/playing.md#the-engine-protocol. and xdocs/no.md"),
        ["docs/playing.md#the-engine-protocol"]
    );
}

/// The README fits on two screens.
#[test]
fn the_readme_is_short() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 120, "README.md has {lines} lines, more than 120: move the detail to a page of docs/");
}

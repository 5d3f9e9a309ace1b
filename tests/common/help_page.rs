//! The reference page (`docs/reference.md`): its command sections rendered
//! from each program's own help (clap's, from the arguments' definitions),
//! and the check that a section of the page is what the code generates.
//! Shared by the test binaries of the crates whose programs the page
//! documents: each runs its own program (`CARGO_BIN_EXE_*`), so the help is
//! always that of the code under test. `GIPF_WRITE_REFERENCE=1` writes the
//! sections instead of failing (`scripts/reference.sh`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The page, from a crate's folder (`CARGO_MANIFEST_DIR`).
pub fn page(manifest_dir: &str) -> PathBuf {
    let mut dir = Path::new(manifest_dir);
    while !dir.join("docs").join("reference.md").is_file() {
        dir = dir.parent().expect("docs/reference.md above the crate");
    }
    dir.join("docs").join("reference.md")
}

/// One argument of a command, as its help lists it.
#[derive(Debug)]
pub struct Arg {
    /// `--games <GAMES>`, `-h, --help`, `<A>`.
    pub spec: String,
    pub meaning: String,
    /// What `[default: ...]` says, if anything.
    pub default: Option<String>,
}

/// A command's help, as clap prints it for `-h`.
#[derive(Debug, Default)]
pub struct Help {
    pub about: String,
    pub usage: String,
    /// Subcommands and their one-line descriptions, `help` left out.
    pub commands: Vec<(String, String)>,
    /// Positional arguments and options, `--help` and `--version` left out.
    pub args: Vec<Arg>,
}

/// Reads clap's help text: the about, `Usage:`, then `Commands:`,
/// `Arguments:` and `Options:`, an item a line (`  SPEC  MEANING`).
pub fn parse(text: &str) -> Help {
    let mut help = Help::default();
    let mut section = "";
    let mut about = Vec::new();
    for line in text.lines() {
        if let Some(usage) = line.strip_prefix("Usage: ") {
            help.usage = usage.trim().to_string();
            section = "usage";
        } else if !line.starts_with(' ') && line.ends_with(':') {
            section = line;
        } else if line.trim().is_empty() {
            continue;
        } else if section.is_empty() {
            about.push(line.trim());
        } else {
            let item = line.trim_start();
            let (spec, rest) = item.split_once("  ").map_or((item, ""), |(spec, rest)| (spec, rest.trim_start()));
            match section {
                "Commands:" if spec != "help" => help.commands.push((spec.to_string(), rest.to_string())),
                "Arguments:" | "Options:" if !matches!(spec, "-h, --help" | "-V, --version") => {
                    help.args.push(arg(spec, rest))
                }
                _ => {}
            }
        }
    }
    help.about = about.join(" ");
    help
}

/// An argument's line: its meaning, less the `[default: ...]` clap adds
/// (anything after it, such as `[possible values: ...]`, stays).
fn arg(spec: &str, rest: &str) -> Arg {
    const DEFAULT: &str = "[default: ";
    let Some(at) = rest.rfind(DEFAULT) else {
        return Arg { spec: spec.to_string(), meaning: rest.to_string(), default: None };
    };
    let value = &rest[at + DEFAULT.len()..];
    let end = value.find(']').unwrap_or(value.len());
    let after = value.get(end + 1..).unwrap_or("").trim_start();
    let meaning = format!("{} {after}", rest[..at].trim_end()).trim().to_string();
    Arg { spec: spec.to_string(), meaning, default: Some(value[..end].to_string()) }
}

/// The help of `binary` with the subcommands `path`.
pub fn help_of(binary: &Path, path: &[String]) -> Help {
    let out = std::process::Command::new(binary).args(path).arg("-h").output().expect("the program runs");
    assert!(out.status.success(), "{} {path:?} -h: {}", binary.display(), String::from_utf8_lossy(&out.stderr));
    parse(&String::from_utf8(out.stdout).expect("help in UTF-8"))
}

/// Every command of `binary`, its own first, each with its help (the
/// subcommands' help read in parallel: each run loads the program).
pub fn commands(binary: &Path, path: Vec<String>) -> Vec<(Vec<String>, Help)> {
    let help = help_of(binary, &path);
    let children: Vec<Vec<String>> =
        help.commands.iter().map(|(name, _)| path.iter().cloned().chain([name.clone()]).collect()).collect();
    let below: Vec<Vec<(Vec<String>, Help)>> = std::thread::scope(|scope| {
        let runs: Vec<_> = children.into_iter().map(|child| scope.spawn(move || commands(binary, child))).collect();
        runs.into_iter().map(|run| run.join().expect("a subcommand's help")).collect()
    });
    std::iter::once((path, help)).chain(below.into_iter().flatten()).collect()
}

/// A table cell's text: no line breaks, `|` escaped.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// Inline code, or the words as they are when they are a sentence.
pub fn code_or_words(text: &str) -> String {
    match text.is_empty() || text.contains(' ') || text.contains('`') {
        true => cell(text),
        false => format!("`{}`", cell(text)),
    }
}

/// The section of the page for the program `name` at `binary`: a heading a
/// command, its description, its usage, a table of its subcommands and one
/// of its arguments (each with its meaning and default).
pub fn command_section(binary: &Path, name: &str) -> String {
    let mut out = String::new();
    for (path, help) in commands(binary, Vec::new()) {
        let full = std::iter::once(name.to_string()).chain(path).collect::<Vec<_>>().join(" ");
        out += &format!("### {full}\n\n");
        if !help.about.is_empty() {
            out += &format!("{}\n\n", help.about);
        }
        out += &format!("Usage: `{}`\n\n", help.usage);
        if !help.commands.is_empty() {
            out += "| command | what it does |\n|---|---|\n";
            for (command, what) in &help.commands {
                let link = format!("{full} {command}").replace(' ', "-");
                out += &format!("| [`{full} {command}`](#{link}) | {} |\n", cell(what));
            }
            out += "\n";
        }
        if !help.args.is_empty() {
            out += "| argument | meaning | default |\n|---|---|---|\n";
            for arg in &help.args {
                let default = arg.default.as_deref().map(code_or_words).unwrap_or_default();
                out += &format!("| `{}` | {} | {default} |\n", cell(&arg.spec), cell(&arg.meaning));
            }
            out += "\n";
        }
    }
    out
}

const BEGIN: &str = "<!-- generated: ";
const END: &str = "<!-- end of generated: ";

/// Checks that the page's section `name` is `generated`: first that it has
/// every line of it (each flag, key and command has its own line), then
/// that it has nothing else and in the same order. With
/// `GIPF_WRITE_REFERENCE=1` it writes the section instead.
pub fn check_section(page: &Path, name: &str, generated: &str) {
    let text = std::fs::read_to_string(page).expect("docs/reference.md");
    let (begin, end) = (format!("{BEGIN}{name} -->\n"), format!("{END}{name} -->"));
    let start = text.find(&begin).unwrap_or_else(|| panic!("docs/reference.md has no line {begin}")) + begin.len();
    let stop = start + text[start..].find(&end).unwrap_or_else(|| panic!("docs/reference.md has no line {end}"));
    let current = &text[start..stop];
    if current == generated {
        return;
    }
    if std::env::var_os("GIPF_WRITE_REFERENCE").is_some() {
        std::fs::write(page, format!("{}{generated}{}", &text[..start], &text[stop..])).expect("write the page");
        eprintln!("docs/reference.md: section {name} written");
        return;
    }
    let lines: std::collections::HashSet<&str> = current.lines().collect();
    let missing: Vec<&str> = generated.lines().filter(|l| !l.is_empty() && !lines.contains(l)).collect();
    let made: std::collections::HashSet<&str> = generated.lines().collect();
    let stale: Vec<&str> = current.lines().filter(|l| !l.is_empty() && !made.contains(l)).collect();
    panic!(
        "docs/reference.md's section {name} is not what the code generates (scripts/reference.sh writes it).\n\
         Lines the code generates that the page lacks:\n{}\nLines of the page the code no longer generates:\n{}",
        missing.join("\n"),
        stale.join("\n")
    );
}

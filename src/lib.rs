//! GIPF: an AlphaZero-style training system built on the LibTorch-free
//! core (`gipf-core`: `rules`, `encoding`, `search`, the baseline players),
//! re-exported here. Modules in dependency order (each uses only those
//! before it): the core ← `net` ← `config`, `durable`, `weights`,
//! `checkpoint_files`, `games`, `stop` ← `shards`, `checkpoint` ← `store`,
//! `progress`, `export` ← `lease`, `model_source`, `serve` ← `players` ←
//! `analysis`, `review`, `tune`, `bench` ← `engine`, `arena`, `selfplay` ←
//! `train`.

pub use gipf_core::{encoding, rules, search};

pub mod net;
pub mod players;

pub mod analysis;
pub mod arena;
pub mod bench;
pub mod checkpoint;
pub mod checkpoint_files;
pub mod config;
pub mod durable;
pub mod engine;
pub mod export;
pub mod games;
pub mod lease;
pub mod model_source;
pub mod progress;
pub mod review;
pub mod selfplay;
pub mod serve;
pub mod shards;
pub mod stop;
pub mod store;
pub mod train;
pub mod tune;
pub mod weights;

/// The per-user cache (`GIPF_CACHE`, else `$XDG_CACHE_HOME/gipf`, else
/// `~/.cache/gipf`): the Python environments of the setup scripts, and the
/// local copies of runs in an object store.
pub fn cache_dir() -> std::path::PathBuf {
    use std::path::PathBuf;
    std::env::var_os("GIPF_CACHE").map(PathBuf::from).unwrap_or_else(|| {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"));
        base.join("gipf")
    })
}

/// Logs to standard error, at `info` unless `RUST_LOG` says otherwise, with
/// colours only on a terminal.
pub fn init_logging() {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    /// Each module's level in the order the documentation above states.
    fn stated_levels() -> BTreeMap<String, usize> {
        let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
        let doc: String = source.lines().filter_map(|l| l.strip_prefix("//!")).collect::<Vec<_>>().join(" ");
        let order = &doc[doc.find("the core ←").unwrap()..doc.find("`train`.").unwrap() + "`train`".len()];
        let mut levels = BTreeMap::new();
        for (level, group) in order.split('←').enumerate() {
            for name in group.split('`').skip(1).step_by(2) {
                levels.insert(name.to_string(), level);
            }
        }
        levels
    }

    /// The modules of `crate::` named in `source`, its tests and comments left out.
    fn uses(source: &str) -> Vec<String> {
        let code = source.split("#[cfg(test)]").next().unwrap();
        code.lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .flat_map(|l| l.split("crate::").skip(1))
            .map(|rest| rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect())
            .collect()
    }

    /// The order stated above is true: every module of `src/` is in it, and
    /// none uses a module beside it or after it, so there is no import circle.
    #[test]
    fn modules_use_only_those_before_them() {
        let levels = stated_levels();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut checked = 0;
        for entry in std::fs::read_dir(&src).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            if name == "lib" || name == "bin" {
                continue;
            }
            let level = *levels.get(&name).unwrap_or_else(|| panic!("src/{name} is not in lib.rs's stated order"));
            let files: Vec<_> = match path.is_dir() {
                true => std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()).collect(),
                false => vec![path.clone()],
            };
            for file in files {
                for used in uses(&std::fs::read_to_string(&file).unwrap()) {
                    if let Some(&used_level) = levels.get(&used).filter(|_| used != name) {
                        assert!(used_level < level, "{} uses crate::{used}, stated beside or after it", file.display());
                    }
                }
            }
            checked += 1;
        }
        assert!(checked > 20, "{checked} modules checked");
    }
}

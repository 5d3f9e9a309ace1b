//! GIPF: an AlphaZero-style training system built on the LibTorch-free
//! core (`gipf-core`: `bounds`, `rules`, `encoding`, `games`, `samples`, `search`,
//! the baseline players, `durable` files and the games folder's `shards`),
//! re-exported here. Modules in dependency order (each uses only those
//! before it): the core ← `error` ← `weights` ← `net` ← `layout` ← `config`, `report`,
//! `stop` ← `store` ← `checkpoint`, `lease` ←
//! `progress`, `export`, `model_source` ← `serve`, `players` ←
//! `review`, `tune`, `bench` ← `engine`, `arena`, `selfplay` ←
//! `train` (`tests/layers.rs` checks it).

#![warn(missing_docs)]

pub use gipf_core::{bounds, durable, encoding, games, rules, samples, search, shards};

pub mod net;
pub mod players;

pub mod arena;
pub mod bench;
pub mod checkpoint;
pub mod config;
pub mod engine;
pub mod error;
pub mod export;
pub mod layout;
pub mod lease;
pub mod model_source;
pub(crate) mod progress;
pub mod report;
pub mod review;
pub mod selfplay;
pub mod serve;
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

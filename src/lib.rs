//! GIPF: an AlphaZero-style training system built on the LibTorch-free
//! core (`gipf-core`: `rules`, `encoding`, `search`, the baseline players),
//! re-exported here. Modules in dependency order: the core ← `net` ←
//! `config`, `durable`, `games` ← `shards`, `store`, `checkpoint` ← `selfplay`, `train`,
//! `players` ← `arena`, `engine`, `export`, `bench`.

pub use gipf_core::{encoding, rules, search};

pub mod net;
pub mod players;

pub mod arena;
pub mod bench;
pub mod checkpoint;
pub mod config;
pub mod durable;
pub mod engine;
pub mod export;
pub mod games;
pub mod selfplay;
pub mod shards;
pub mod store;
pub mod train;

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

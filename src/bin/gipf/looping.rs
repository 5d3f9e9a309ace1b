//! `gipf loop`: the whole training loop in one process.

use std::path::PathBuf;

use anyhow::Result;
use gipf::config::Config;
use gipf::net::parse_device;
use gipf::train::{run, RunDir};

#[derive(clap::Args)]
pub struct Args {
    /// Configuration file (TOML).
    #[arg(long, default_value = "configs/cpu.toml")]
    config: PathBuf,
    /// Run folder: games/, models/, logs/; or a run in an object store (s3://bucket/prefix): games
    /// and checkpoints go through it, the rest is kept in a local copy under the cache.
    #[arg(long, default_value = "runs/main")]
    run: String,
    /// Generations to run; 0 runs until stopped.
    #[arg(long, default_value_t = 0)]
    generations: u64,
    /// auto, cpu, cuda or cuda:N.
    #[arg(long, default_value = "auto")]
    device: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(args: Args) -> Result<()> {
    // The loop stops cleanly on SIGINT and SIGTERM; other commands end at once.
    gipf::stop::install()?;
    let config = Config::load(&args.config)?;
    let device = parse_device(&args.device)?;
    let generations = (args.generations > 0).then_some(args.generations);
    run::self_play_loop(&config, &RunDir::open(&args.run)?, device, args.seed, generations)
}

//! `gipf loop`: the whole training loop in one process.

use std::path::PathBuf;

use anyhow::{Context, Result};
use gipf::config::Config;
use gipf::net::parse_device;
use gipf::train::{jobs, ParentModel, RunDir};

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
    /// Start a new run from this model: a checkpoint's weights file, a models folder (its newest
    /// checkpoint, or its best where it gates) or `reference`. Its weights, and its optimizer state where
    /// its files hold one; the run's checkpoints name it as their parent. A run already started resumes.
    #[arg(long, value_name = "MODEL")]
    from: Option<String>,
}

pub fn run(args: Args) -> Result<()> {
    // The loop stops cleanly on SIGINT and SIGTERM; other commands end at once.
    gipf::stop::install()?;
    let config = Config::load(&args.config)?;
    let device = parse_device(&args.device)?;
    let generations = (args.generations > 0).then_some(args.generations);
    let from = args.from.as_deref().map(|name| ParentModel::named(name).with_context(|| format!("--from {name}")));
    let how = jobs::Start { device, seed: args.seed, from: from.transpose()? };
    jobs::training_loop(&config, &RunDir::open(&args.run)?, &how, generations)
}

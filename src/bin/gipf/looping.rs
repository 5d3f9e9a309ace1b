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
    /// Run folder: games/, models/, logs/.
    #[arg(long, default_value = "runs/main")]
    run: PathBuf,
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
    let config = Config::load(&args.config)?;
    let device = parse_device(&args.device)?;
    tch::set_num_threads(config.selfplay.torch_threads);
    let generations = (args.generations > 0).then_some(args.generations);
    run::self_play_loop(&config, &RunDir { root: args.run, store: None }, device, args.seed, generations)
}

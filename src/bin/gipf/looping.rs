//! `gipf loop`: the whole training loop in one process, on every device
//! of the machine.

use std::path::PathBuf;

use anyhow::{Context, Result};
use gipf::config::{shipped_for, Config};
use gipf::layout::{device_name, parse_devices, plan, Layout};
use gipf::train::{jobs, ParentModel, RunDir};

#[derive(clap::Args)]
pub struct Args {
    /// Configuration file (TOML); `auto`: configs/gpu.toml where LibTorch sees a GPU, else configs/cpu.toml.
    #[arg(long, default_value = "auto")]
    config: String,
    /// Run folder: games/, models/, logs/; or a run in an object store (s3://bucket/prefix): games
    /// and checkpoints go through it, the rest is kept in a local copy under the cache.
    #[arg(long, default_value = "runs/main")]
    run: String,
    /// Generations to run; 0 runs until stopped.
    #[arg(long, default_value_t = 0)]
    generations: u64,
    /// The devices: auto (every GPU LibTorch sees, else the CPU), all (every GPU), or a list such as
    /// cuda:0,cuda:2 or cpu. The trainer runs on the first, self-play on each. Default: loop.devices.
    #[arg(long, alias = "device")]
    devices: Option<String>,
    /// The cores the run may use, divided among the trainer and the self-play workers (default: every
    /// core the process may run on).
    #[arg(long)]
    cores: Option<usize>,
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
    let (config, layout) = config_and_layout(&args.config, args.devices.as_deref(), args.cores)?;
    match config.main_loop.workers {
        0 => tracing::info!("generations in turn on {} (loop.workers = 0)", device_name(layout.trainer)),
        _ => tracing::info!("layout:\n{layout}"),
    }
    let generations = (args.generations > 0).then_some(args.generations);
    let from = args.from.as_deref().map(|name| ParentModel::named(name).with_context(|| format!("--from {name}")));
    let how = jobs::Start { device: layout.trainer, seed: args.seed, from: from.transpose()? };
    jobs::training_loop(&config, &RunDir::open(&args.run)?, &how, &layout, generations)
}

/// The config (`auto`: the shipped one for this machine, saying why) and
/// the run's layout on `devices` (default: the config's) and `cores`
/// (default: the process's), with a warning where the cores cut the
/// workers asked for.
pub fn config_and_layout(config: &str, devices: Option<&str>, cores: Option<usize>) -> Result<(Config, Layout)> {
    let cuda = tch::Cuda::device_count().max(0) as usize;
    let path = match config {
        "auto" => {
            let (path, why) = shipped_for(cuda);
            tracing::info!("config {}: {why} (--config chooses another)", path.display());
            path.to_path_buf()
        }
        path => PathBuf::from(path),
    };
    let config = Config::load(&path)?;
    let devices_text = devices.unwrap_or(&config.main_loop.devices);
    let mut devices = parse_devices(devices_text, cuda).with_context(|| format!("devices {devices_text}"))?;
    if config.main_loop.workers == 0 && devices.len() > 1 {
        // Generations in turn (loop.workers = 0) run on one device: the first.
        devices.truncate(1);
    }
    let cores = cores.unwrap_or_else(gipf::config::cores);
    anyhow::ensure!((1..=65_536).contains(&cores), "--cores {cores}: expected 1 to 65536");
    let layout = plan(&devices, config.budget(cores))?;
    let asked = devices.len() * config.main_loop.workers;
    if layout.workers.len() < asked {
        tracing::warn!(
            "{} self-play workers instead of {asked}: {cores} cores cannot give each its threads (--cores, loop.workers)",
            layout.workers.len()
        );
    }
    Ok((config, layout))
}

//! `gipf info`: what this machine offers and what a run would use of it.

use anyhow::Result;
use gipf::layout::{device_name, Layout};
use gipf::net::{machine_name, Precision};
use tch::Device;

#[derive(clap::Args)]
pub struct Args {
    /// The config the run would use, as `gipf loop --config`.
    #[arg(long, default_value = "auto")]
    config: String,
    /// The run's devices, as `gipf loop --devices` (default: the config's loop.devices).
    #[arg(long)]
    devices: Option<String>,
    /// The cores the run may use, as `gipf loop --cores`.
    #[arg(long)]
    cores: Option<usize>,
}

pub fn run(args: Args) -> Result<()> {
    println!("CPU: {}", machine_name());
    println!("play in auto precision on the CPU: {:?}", Precision::Auto.kind(Device::Cpu));
    println!("{}", gipf::net::cuda_summary());
    for gpu in gpus() {
        println!("  {gpu}");
    }
    let (config, layout) = crate::looping::config_and_layout(&args.config, args.devices.as_deref(), args.cores)?;
    let (play, train) = (config.play.precision, config.train.precision);
    println!(
        "the run: network {}x{}, play.precision {} ({:?} on {:?}), train.precision {} ({:?})",
        config.network.blocks,
        config.network.channels,
        play.name(),
        play.kind(layout.trainer),
        layout.trainer,
        train.name(),
        train.kind(layout.trainer),
    );
    let backend = match config.play.inference().resolve(layout.trainer) {
        Ok((_, backend)) => backend.name().to_string(),
        Err(why) => format!("refused: {why:#}"),
    };
    println!("play.backend {} ({backend} on {:?})", config.play.backend.name(), layout.trainer);
    if config.main_loop.workers == 0 {
        println!("generations in turn on {:?} (loop.workers = 0)", layout.trainer);
        return Ok(());
    }
    println!("{layout}");
    println!("as separate processes (one machine, a run folder they share):");
    for line in separate_processes(&layout) {
        println!("  {line}");
    }
    Ok(())
}

/// The GPUs the driver lists, with their index, name and memory, as
/// `nvidia-smi` tells them (nothing where it is missing). Its indices are
/// the driver's: with `CUDA_VISIBLE_DEVICES` set (as Slurm sets it),
/// LibTorch's `cuda:N` counts only the visible ones.
fn gpus() -> Vec<String> {
    let query = std::process::Command::new("nvidia-smi")
        .args(["--query-gpu=index,name,memory.total", "--format=csv,noheader"])
        .output();
    match query {
        Ok(out) if out.status.success() => {
            String::from_utf8_lossy(&out.stdout).lines().map(|l| format!("GPU {}", l.trim())).collect()
        }
        _ => Vec::new(),
    }
}

/// The layout as `trainer` and `selfplay` command lines, each with its cores.
fn separate_processes(layout: &Layout) -> Vec<String> {
    let trainer = format!("trainer --device {} --cores {} ...", device_name(layout.trainer), layout.trainer_threads);
    let mut lines = vec![trainer];
    for worker in &layout.workers {
        lines.push(format!("selfplay --device {} --cores {} ...", device_name(worker.device), worker.threads()));
    }
    lines
}

//! The self-play generator: plays games with the newest network and writes
//! the finished ones to the games folder in shards (`selfplay.shard_games`
//! games, or `selfplay.shard_seconds`, a shard).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Parser;
use gipf::config::Config;
use gipf::layout::{plan, Budget};
use gipf::model_source::ModelSource;
use gipf::net::parse_device;
use gipf::selfplay::{play_workers, PlayOptions};

#[derive(Parser)]
#[command(name = "selfplay", version, about = "Self-play game generator for GIPF")]
struct Args {
    /// Configuration file (TOML), e.g. configs/cpu.toml.
    #[arg(long)]
    config: PathBuf,
    /// Games to play; 0 plays until stopped.
    #[arg(long, default_value_t = 0)]
    games: u64,
    /// Games folder: finished games are written there in shards. Or an
    /// object store's folder (s3://bucket/prefix/games): each shard is
    /// uploaded there from a local outbox.
    #[arg(long)]
    out: PathBuf,
    /// Weights file, or a folder whose newest checkpoint is used (and picked
    /// up again as new ones appear), or an object store's models folder
    /// (s3://bucket/prefix/models, its latest.json). Without it, a fresh
    /// network plays.
    #[arg(long)]
    model: Option<PathBuf>,
    /// auto, cpu, cuda or cuda:N.
    #[arg(long, default_value = "auto")]
    device: String,
    /// The cores this process may use: its LibTorch threads (play.torch_threads), and search threads
    /// for the rest where selfplay.search_threads = 0 (default: every core the process may run on).
    /// `gipf info` divides a machine among a trainer and several of these.
    #[arg(long)]
    cores: Option<usize>,
    /// Self-play workers in this process, each with its copy of the network, dividing its cores: two keep
    /// a GPU busy (one's batch runs while the other gathers its next).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    workers: u16,
    /// Seed for reproducible games; without it, a fresh one from the
    /// operating system, so that no two processes play the same games.
    #[arg(long)]
    seed: Option<u64>,
    /// This process's name in shard names and games (letters, digits, '.',
    /// '_'); without it, the host name and a random tag.
    #[arg(long)]
    worker: Option<String>,
    /// Measure instead: play for this many seconds and compare the network
    /// evaluations/s achieved with the raw forward throughput at the same
    /// batch size, timed in short pauses of the same run.
    #[arg(long, value_name = "SECONDS")]
    bench: Option<f64>,
    /// With --bench: replace the network's forward pass by outputs of its
    /// shape at no cost, to measure self-play's CPU side alone (search,
    /// encoding, priors, backing up), as it runs beside a fast GPU.
    #[arg(long, requires = "bench")]
    constant_network: bool,
}

fn main() {
    gipf::init_logging();
    if let Err(err) = gipf::stop::install() {
        eprintln!("selfplay: {err:#}");
        std::process::exit(1);
    }
    if let Err(err) = run_args(Args::parse()) {
        eprintln!("selfplay: {err:#}");
        std::process::exit(1);
    }
}

fn run_args(args: Args) -> Result<()> {
    let config = Config::load(&args.config)?;
    let device = parse_device(&args.device)?;
    let cores = args.cores.unwrap_or_else(gipf::config::cores);
    anyhow::ensure!((1..=65_536).contains(&cores), "--cores {cores}: expected 1 to 65536");
    // No trainer: the cores the workers' LibTorch threads leave search.
    let budget = Budget { trainer_threads: 0, workers_per_device: args.workers.into(), ..config.budget(cores) };
    // Each worker's search threads are set from its place by play_workers.
    let places = plan(&[device], budget)?.workers;
    tracing::info!(
        workers = places.len(),
        threads = places.iter().map(|w| w.threads()).sum::<usize>(),
        cores,
        "self-play layout"
    );
    let seed = args.seed.unwrap_or_else(rand::random);
    let worker = match args.worker {
        Some(worker) => {
            gipf::games::check_worker_name(&worker)?;
            worker
        }
        None => gipf::shards::new_worker_id(),
    };
    tracing::info!(seed, worker, "self-play process");
    let url = args.out.to_string_lossy().into_owned();
    let (out, upload) = match gipf::store::is_url(&url) {
        true => (gipf::store::local_cache(&url, "outbox"), Some(gipf::store::Store::open(&url)?.into())),
        false => (args.out, None),
    };
    let options = PlayOptions {
        upload,
        games: (args.games > 0).then_some(args.games),
        device,
        seed,
        progress: args.bench.is_none(),
        probe_raw: args.bench.is_some() && !args.constant_network,
        constant_network: args.constant_network,
        ..PlayOptions::new(config.clone(), out, ModelSource::from_arg(args.model.as_deref())?, worker)
    };
    let Some(seconds) = args.bench else {
        let report = play_workers(options, &places)?;
        println!(
            "{} games, {} actions, {:.0} network evaluations/s (mean batch {:.1}) in {:.1} s; \
             {} shards, {:.0} bytes a game",
            report.stats.games,
            report.stats.actions,
            report.evaluations_per_second(),
            report.mean_batch(),
            report.seconds,
            report.shards,
            report.shard_bytes as f64 / report.stats.games.max(1) as f64
        );
        return Ok(());
    };
    anyhow::ensure!(seconds > 0.0 && seconds.is_finite(), "--bench must be a positive number of seconds");
    let options = PlayOptions { duration: Some(Duration::from_secs_f64(seconds)), games: None, ..options };
    let report = play_workers(options, &places)?;
    let achieved = report.evaluations_per_second();
    if args.constant_network {
        let threads: usize = places.iter().map(|w| w.search_threads).sum();
        println!(
            "self-play CPU side (no network): {achieved:.0} evaluations/s at mean batch {:.1} with {threads} search \
             threads, {:.0} per thread ({} games)",
            report.mean_batch(),
            achieved / threads as f64,
            report.stats.games
        );
        return Ok(());
    }
    println!(
        "self-play: {achieved:.0} evaluations/s at mean batch {:.1} ({} games)",
        report.mean_batch(),
        report.stats.games
    );
    println!("time in forward passes: {:.1}% of the run", 100.0 * report.forward_share());
    match (report.raw, report.raw_per_second()) {
        (Some((_, probed, batch)), Some(raw)) => {
            println!("raw network: {raw:.0} positions/s at batch {batch} (timed between steps, {probed:.1} s)");
            println!("ratio: {:.1}% of raw throughput", 100.0 * achieved / raw);
        }
        _ => println!("raw network: not measured (the run was too short to probe it)"),
    }
    Ok(())
}

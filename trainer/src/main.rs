//! The trainer: reads the games of a run, trains, writes checkpoints.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;
use gipf::config::Config;
use gipf::net::parse_device;
use gipf::train::Window;
use gipf::train::{jobs, prefetch, window_size, DeviceBatch, ParentModel, RunDir, StepSums, Trainer, READ_EVERY};
use rand::rngs::SmallRng;
use rand::SeedableRng;

#[derive(Parser)]
#[command(name = "trainer", version, about = "Trains the GIPF network on a run's self-play games")]
struct Args {
    /// Configuration file (TOML), e.g. configs/cpu.toml.
    #[arg(long)]
    config: PathBuf,
    /// Run folder: games/ (read), models/ (checkpoints), logs/ (TensorBoard).
    /// Or a run in an object store (s3://bucket/prefix): its games/ are
    /// downloaded into a local copy, checkpoints published to its models/.
    #[arg(long)]
    run: PathBuf,
    /// Stop at this training step; 0 trains until stopped.
    #[arg(long, default_value_t = 0)]
    steps: u64,
    /// auto, cpu, cuda or cuda:N.
    #[arg(long, default_value = "auto")]
    device: String,
    /// The cores this process may use: its LibTorch threads (default: train.torch_threads, which on a GPU
    /// only launch kernels). `gipf info` divides a machine among a trainer and self-play processes.
    #[arg(long)]
    cores: Option<usize>,
    /// Seed of the training batches (and of a fresh network).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Measure instead: training samples/s with data loading, against train
    /// steps on one fixed batch, each for this many seconds (in alternating
    /// one-second slices).
    #[arg(long, value_name = "SECONDS")]
    bench: Option<f64>,
    /// Start a new run from this model (a checkpoint's weights file, a models folder or `reference`):
    /// as `gipf loop --from`.
    #[arg(long, value_name = "MODEL")]
    from: Option<String>,
}

fn main() {
    gipf::init_logging();
    if let Err(err) = run_args(Args::parse()) {
        eprintln!("trainer: {err:#}");
        std::process::exit(1);
    }
}

fn run_args(args: Args) -> Result<()> {
    let mut config = Config::load(&args.config)?;
    let device = parse_device(&args.device)?;
    if let Some(cores) = args.cores {
        anyhow::ensure!((1..=256).contains(&cores), "--cores {cores}: expected 1 to 256");
        config.train.torch_threads = cores as i32;
    }
    tch::set_num_threads(config.train.torch_threads);
    let run_dir = RunDir::open(&args.run.to_string_lossy())?;
    match args.bench {
        None => {
            // Training stops cleanly on SIGINT and SIGTERM; the bench ends at once.
            gipf::stop::install()?;
            let from =
                args.from.as_deref().map(|name| ParentModel::named(name).with_context(|| format!("--from {name}")));
            let how = jobs::Start { device, seed: args.seed, from: from.transpose()? };
            jobs::trainer(&config, &run_dir, &how, (args.steps > 0).then_some(args.steps))
        }
        Some(seconds) => bench(&config, &run_dir, device, seconds),
    }
}

fn bench(config: &Config, run_dir: &RunDir, device: tch::Device, seconds: f64) -> Result<()> {
    anyhow::ensure!(seconds > 0.0 && seconds.is_finite(), "--bench must be a positive number of seconds");
    let mut window = Window::new(config.train.targets(), config.game.variant);
    window.load_new(&run_dir.games(), |total| window_size(&config.train, total))?;
    anyhow::ensure!(
        !window.is_empty(),
        "no games in {} to measure with: run self-play first",
        run_dir.games().display()
    );
    let mut trainer = Trainer::new(config, device, 0);
    let mut rng = SmallRng::seed_from_u64(0);
    let batch_size = config.train.batch_size;
    let duration = Duration::from_secs_f64(seconds);

    // Raw steps on one fixed batch, and steps as training runs them (batches
    // built and copied to the device on a second thread), in alternating
    // one-second slices, so that both see the same stretch of a shared
    // machine's time. Losses are read back once per READ_EVERY steps, as in
    // training, and at the end of each slice, so that a device's queued
    // work is counted in the slice that queued it.
    let fixed = DeviceBatch::new(&window.batch(batch_size, &mut rng), device);
    let mut sums = StepSums::new(device);
    let step = |trainer: &mut Trainer, sums: &mut StepSums, batch: &DeviceBatch| {
        trainer.step_on_device(batch, sums);
        if sums.steps == READ_EVERY {
            trainer.read(sums);
        }
    };
    step(&mut trainer, &mut sums, &fixed);
    let slice = Duration::from_secs(1).min(duration);
    let (mut raw, mut loaded) = ((0u64, 0.0f64), (0u64, 0.0f64));
    std::thread::scope(|scope| -> Result<()> {
        let batches = prefetch(scope, &window, batch_size, device, SmallRng::seed_from_u64(1), None);
        while raw.1 < seconds || loaded.1 < seconds {
            let start = Instant::now();
            while start.elapsed() < slice {
                step(&mut trainer, &mut sums, &fixed);
                raw.0 += 1;
            }
            trainer.read(&mut sums);
            raw.1 += start.elapsed().as_secs_f64();
            let start = Instant::now();
            while start.elapsed() < slice {
                step(&mut trainer, &mut sums, &batches.recv()?);
                loaded.0 += 1;
            }
            trainer.read(&mut sums);
            loaded.1 += start.elapsed().as_secs_f64();
        }
        Ok(())
    })?;
    let rate = |(steps, secs): (u64, f64)| (steps * batch_size as u64) as f64 / secs;
    let (raw, loaded) = (rate(raw), rate(loaded));
    trainer.step_on_device(&fixed, &mut sums);
    let loss = trainer.read(&mut sums).stats.context("the fixed batch's loss is not finite")?;
    println!("window: {} samples; batch {batch_size}; network {:?}", window.len(), config.network);
    println!("raw train steps (one fixed batch): {raw:.0} samples/s");
    println!("with data loading and augmentation: {loaded:.0} samples/s");
    println!("ratio: {:.1}% of raw", 100.0 * loaded / raw);
    println!("(policy loss {:.3}, value loss {:.3})", loss.policy_loss, loss.value_loss);
    Ok(())
}

//! `gipf bench`: throughput figures.

use std::time::Duration;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};

use gipf::bench::{classical_search, memory_bytes, midgame_positions, random_games, synthetic_games, uniform_search};
use gipf::config::Config;
use gipf::net::parse_device;
use gipf::players::Style;
use gipf::rules::Variant;
use gipf::selfplay::overlap::{measure, Latency};
use gipf::train::window_size;
use gipf::train::{GamesRead, Window};

#[derive(clap::Subcommand)]
pub enum Bench {
    /// Random games on one core: legal actions listed and one played, per second.
    Rules {
        /// Seconds to run each variant.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
    },
    /// Tree search with a uniform evaluator (no network), simulations per second on one core.
    Search {
        /// Seconds to run each batch size.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        /// Simulations per search.
        #[arg(long, default_value_t = 800)]
        simulations: u32,
    },
    /// The classical players (`alphabeta`, `classic`) on one core: nodes per
    /// second and the depth reached in a fixed time on midgame positions.
    Classic {
        /// Milliseconds for each position's search.
        #[arg(long, default_value_t = 250)]
        ms: u64,
        /// Positions searched by each player.
        #[arg(long, default_value_t = 40)]
        positions: u32,
    },
    /// Raw forward throughput, positions per second, of each backend and precision side by side (LibTorch fp32,
    /// ONNX Runtime fp32, LibTorch bf16 where the CPU has bf16 units) at several batch sizes and network shapes.
    Net {
        /// Configuration whose [play] threads and [network] shape are measured.
        #[arg(long, default_value = "configs/cpu.toml")]
        config: PathBuf,
        /// auto, cpu, cuda or cuda:N.
        #[arg(long, default_value = "auto")]
        device: String,
        /// Seconds for each batch size and forward pass.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        /// Intra-op threads (default: the config's play.torch_threads).
        #[arg(long)]
        threads: Option<i32>,
        /// Batch sizes to measure, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "1,8,32,128,512")]
        batches: Vec<usize>,
        /// Network shapes, BLOCKSxCHANNELS, comma-separated (default: the config's).
        #[arg(long, value_delimiter = ',')]
        shapes: Vec<String>,
    },
    /// Self-play against a stand-in GPU of fixed latency (no GPU needed): evaluations/s and the device's busy
    /// share with one worker and with two, which keep two batches in flight.
    Overlap {
        /// Configuration whose [search] and [selfplay] play.
        #[arg(long, default_value = "configs/gpu.toml")]
        config: PathBuf,
        /// Seconds for each number of workers.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// Milliseconds of host time on each side of a batch (its copies in and out).
        #[arg(long, default_value_t = 2.0)]
        copy_ms: f64,
        /// Milliseconds the device runs a batch, one batch at a time.
        #[arg(long, default_value_t = 5.0)]
        run_ms: f64,
        /// Search threads of each worker.
        #[arg(long, default_value_t = 1)]
        threads: usize,
    },
    /// A trainer's start on a large games folder: seconds to fill its window,
    /// and the memory the window takes against the process's peak.
    Window {
        /// Games folder (made first with --generate).
        #[arg(long)]
        dir: PathBuf,
        /// Configuration whose [train] window is filled.
        #[arg(long, default_value = "configs/cpu.toml")]
        config: PathBuf,
        /// Write random games of about this many positions into --dir, then stop.
        #[arg(long, value_name = "POSITIONS")]
        generate: Option<u64>,
        /// Start as a trainer without a checkpoint (reading every file), not
        /// as one resumed from a checkpoint that read them all.
        #[arg(long)]
        fresh: bool,
    },
}

/// What `--generate` wrote, kept beside the shards for the measurement.
const SYNTHETIC_FILE: &str = "synthetic.json";

fn window(dir: &std::path::Path, config: &std::path::Path, generate: Option<u64>, fresh: bool) -> Result<()> {
    let config = Config::load(config)?;
    if let Some(positions) = generate {
        let (games, positions) = synthetic_games(dir, config.game.variant, positions, 64, 1)?;
        let bytes: u64 = gipf::shards::list(dir)?.iter().map(|f| f.path.metadata().map_or(0, |m| m.len())).sum();
        gipf::durable::write_atomic(
            &dir.join(SYNTHETIC_FILE),
            serde_json::json!({"games": games, "positions": positions}).to_string().as_bytes(),
        )?;
        println!("{games} games, {positions} positions, {bytes} bytes ({:.0} a game)", bytes as f64 / games as f64);
        return Ok(());
    }
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(SYNTHETIC_FILE))
            .with_context(|| format!("no {SYNTHETIC_FILE} in {}: run with --generate first", dir.display()))?,
    )?;
    let positions = summary["positions"].as_u64().context("a position count")?;
    let files = gipf::shards::list(dir)?;
    let mut window = match fresh {
        true => Window::new(config.train.targets(), config.game.variant),
        false => {
            let read = GamesRead { cursor: files.last().map(|f| f.name.clone()), ..GamesRead::default() };
            Window::new(config.train.targets(), config.game.variant).resumed(positions, read)
        }
    };
    let (rss_before, _) = memory_bytes().unwrap_or_default();
    let start = Instant::now();
    let report = window.load_new(dir, |total| window_size(&config.train, total))?;
    let seconds = start.elapsed().as_secs_f64();
    let (rss, peak) = memory_bytes().unwrap_or_default();
    let bytes = window.memory_bytes();
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    println!(
        "{} start on {} files ({positions} positions): read {} files, passed over {}, in {seconds:.2} s",
        if fresh { "fresh" } else { "resumed" },
        files.len(),
        report.files,
        report.passed_over
    );
    println!(
        "window: {} samples of {} games, {:.1} MiB in memory; process memory {:.1} MiB before, {:.1} MiB after, \
         peak {:.1} MiB: peak growth {:.2} times the window",
        window.len(),
        window.games(),
        mib(bytes as u64),
        mib(rss_before),
        mib(rss),
        mib(peak),
        (peak.saturating_sub(rss_before)) as f64 / bytes.max(1) as f64
    );
    Ok(())
}

pub fn run(which: Bench) -> Result<()> {
    match which {
        Bench::Rules { seconds } => {
            anyhow::ensure!(seconds > 0.0 && seconds.is_finite(), "--seconds must be positive");
            for variant in Variant::ALL {
                let t = random_games(variant, Duration::from_secs_f64(seconds), 100_000, 1);
                println!(
                    "{:<10} {:>12.0} actions/s on one core ({} games, {:.1} actions per game)",
                    variant.name(),
                    t.actions_per_second(),
                    t.games,
                    t.actions as f64 / t.games as f64
                );
            }
            Ok(())
        }
        Bench::Search { seconds, simulations } => {
            anyhow::ensure!(seconds > 0.0 && seconds.is_finite(), "--seconds must be positive");
            anyhow::ensure!(simulations > 0, "--simulations must be positive");
            for batch in [1, 8, 32] {
                let t = uniform_search(Variant::Standard, Duration::from_secs_f64(seconds), simulations, batch);
                println!(
                    "standard, {simulations} simulations a search, batch {batch:>2}: {:>9.0} simulations/s on one core",
                    t.simulations_per_second()
                );
            }
            Ok(())
        }
        Bench::Classic { ms, positions } => {
            anyhow::ensure!(ms > 0 && positions > 0, "--ms and --positions must be positive");
            let set = midgame_positions(positions);
            for (name, style) in [("alphabeta", Style::AlphaBeta), ("classic", Style::Classic)] {
                let t = classical_search(style, &set, Duration::from_millis(ms));
                println!(
                    "{name:<9} {:>10.0} nodes/s on one core, depth {:.1} on average in {ms} ms ({} positions)",
                    t.nodes_per_second(),
                    t.mean_depth,
                    t.positions
                );
            }
            Ok(())
        }
        Bench::Net { config, device, seconds, threads, batches, shapes } => {
            net(&config, &device, seconds, threads, &batches, &shapes)
        }
        Bench::Window { dir, config, generate, fresh } => window(&dir, &config, generate, fresh),
        Bench::Overlap { config, seconds, copy_ms, run_ms, threads } => {
            overlap(&config, seconds, copy_ms, run_ms, threads)
        }
    }
}

fn net(
    config: &std::path::Path,
    device: &str,
    seconds: f64,
    threads: Option<i32>,
    batches: &[usize],
    shapes: &[String],
) -> Result<()> {
    anyhow::ensure!(seconds > 0.0 && seconds < 1e6, "--seconds: from 0 to a million, not included");
    anyhow::ensure!(batches.iter().all(|&b| (1..=65_536).contains(&b)), "--batches: sizes from 1 to 65536");
    let config = Config::load(config)?;
    let device = parse_device(device)?;
    let threads = threads.unwrap_or(config.play.torch_threads);
    anyhow::ensure!((1..=256).contains(&threads), "--threads: from 1 to 256");
    tch::set_num_threads(threads);
    let mut networks = Vec::new();
    for text in shapes {
        networks.push(parse_shape(text, &config.network)?);
    }
    if networks.is_empty() {
        networks.push(config.network);
    }
    let forwards = gipf::bench::forwards_to_compare(device);
    println!("{}", gipf::net::machine_name());
    println!("{}", gipf::net::cuda_summary());
    println!("on {device:?}, {threads} threads; positions/s, and the ratio to the first column");
    let names: Vec<String> = forwards.iter().map(|f| format!("{} {}", f.backend.name(), f.precision.name())).collect();
    for shape in &networks {
        println!("network {}x{}: {:>7} {}", shape.blocks, shape.channels, "batch", names.join(" | "));
        let rows = gipf::bench::compare_forwards(
            shape,
            config.game.variant,
            device,
            &forwards,
            batches,
            Duration::from_secs_f64(seconds),
        )?;
        for (batch, rates) in batches.iter().zip(rows) {
            let cells: Vec<String> = rates.iter().map(|r| format!("{r:>9.0} ({:.2})", r / rates[0])).collect();
            println!("network {}x{}: {batch:>7} {}", shape.blocks, shape.channels, cells.join(" | "));
        }
    }
    Ok(())
}

/// `BLOCKSxCHANNELS`, the rest of the shape from `base`.
fn parse_shape(text: &str, base: &gipf::net::NetConfig) -> Result<gipf::net::NetConfig> {
    let parsed = text.split_once('x').and_then(|(b, c)| Some((b.parse().ok()?, c.parse().ok()?)));
    let Some((blocks, channels)) = parsed else {
        anyhow::bail!("--shapes: '{text}' is not BLOCKSxCHANNELS (such as 5x32)")
    };
    let shape = gipf::net::NetConfig { blocks, channels, ..*base };
    shape.validate().map_err(|e| anyhow::anyhow!("--shapes: {text}: {e}"))?;
    Ok(shape)
}

fn overlap(config: &std::path::Path, seconds: f64, copy_ms: f64, run_ms: f64, threads: usize) -> Result<()> {
    let positive = |x: f64| (0.0..1e6).contains(&x);
    anyhow::ensure!(seconds > 0.0 && positive(seconds), "--seconds must be positive");
    anyhow::ensure!(positive(copy_ms) && positive(run_ms) && run_ms > 0.0, "--copy-ms and --run-ms: milliseconds");
    anyhow::ensure!((1..=256).contains(&threads), "--threads: 1 to 256");
    let config = Config::load(config)?;
    let ms = |x: f64| Duration::from_secs_f64(x / 1000.0);
    let latency = Latency { copy: ms(copy_ms), run: ms(run_ms) };
    println!(
        "stand-in device: {copy_ms} ms host copy in, {run_ms} ms on the device, {copy_ms} ms copy out; {} games a worker, \
         {threads} search threads each",
        config.selfplay.parallel_games
    );
    let cpu_side =
        measure(&config, 1, threads, Latency { copy: Duration::ZERO, run: Duration::ZERO }, ms(1000.0 * seconds))?;
    println!("CPU side alone (no latency), one worker: {:.0} evaluations/s", cpu_side.evaluations_per_second());
    for workers in [1, 2] {
        let o = measure(&config, workers, threads, latency, Duration::from_secs_f64(seconds))?;
        println!(
            "{workers} worker{}: {:>8.0} evaluations/s at mean batch {:.1}, device busy {:.1}%; the device alone at \
             that batch: {:.0}",
            if workers == 1 { " " } else { "s" },
            o.evaluations_per_second(),
            o.mean_batch(),
            100.0 * o.device_busy,
            o.mean_batch() / (run_ms / 1000.0)
        );
    }
    Ok(())
}

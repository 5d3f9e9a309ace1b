//! `gipf bench`: throughput figures.

use std::time::Duration;

use anyhow::Result;
use std::path::PathBuf;

use gipf::bench::{net_throughput, random_games, uniform_search};
use gipf::config::Config;
use gipf::net::{parse_device, Network};
use gipf::rules::Variant;

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
    /// Raw forward throughput of the configured network, positions per second, at several batch sizes.
    Net {
        /// Configuration whose [network] shape is measured.
        #[arg(long, default_value = "configs/cpu.toml")]
        config: PathBuf,
        /// auto, cpu, cuda or cuda:N.
        #[arg(long, default_value = "auto")]
        device: String,
        /// Seconds for each batch size.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        /// LibTorch intra-op threads (default: the config's selfplay.torch_threads).
        #[arg(long)]
        threads: Option<i32>,
    },
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
        Bench::Net { config, device, seconds, threads } => {
            anyhow::ensure!(seconds > 0.0 && seconds.is_finite(), "--seconds must be positive");
            let config = Config::load(&config)?;
            let device = parse_device(&device)?;
            tch::set_num_threads(threads.unwrap_or(config.selfplay.torch_threads));
            let network = Network::new(&config.network, device, 0);
            let n = &config.network;
            println!(
                "network {} blocks x {} channels on {device:?}, {} threads",
                n.blocks,
                n.channels,
                tch::get_num_threads()
            );
            for batch in [1, 8, 32, 128, 512] {
                let rate = net_throughput(&network, config.selfplay.variant, batch, Duration::from_secs_f64(seconds));
                println!("batch {batch:>3}: {rate:>10.0} positions/s");
            }
            Ok(())
        }
    }
}

//! `gipf bench`: throughput figures.

use std::time::Duration;

use anyhow::Result;
use gipf::bench::{random_games, uniform_search};
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
    }
}

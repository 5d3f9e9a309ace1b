//! `gipf bench`: throughput figures.

use std::time::Duration;

use anyhow::Result;
use gipf::bench::random_games;
use gipf::rules::Variant;

#[derive(clap::Subcommand)]
pub enum Bench {
    /// Random games on one core: legal actions listed and one played, per second.
    Rules {
        /// Seconds to run each variant.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
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
    }
}

//! `gipf match`: two checkpoints head to head.

use std::path::PathBuf;

use anyhow::Result;
use gipf::arena::play_match;
use gipf::config::Config;
use gipf::net::{parse_device, Network};

#[derive(clap::Args)]
pub struct Args {
    /// Weights of player A.
    a: PathBuf,
    /// Weights of player B.
    b: PathBuf,
    /// Configuration with the networks' shape, the variant and the search settings.
    #[arg(long, default_value = "configs/cpu.toml")]
    config: PathBuf,
    #[arg(long, default_value_t = 20)]
    games: u32,
    /// Simulations per move for both players.
    #[arg(long, default_value_t = 64)]
    sims: u32,
    /// auto, cpu, cuda or cuda:N.
    #[arg(long, default_value = "auto")]
    device: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(args: Args) -> Result<()> {
    let config = Config::load(&args.config)?;
    anyhow::ensure!(args.games > 0 && args.sims > 1, "--games must be positive and --sims at least 2");
    let device = parse_device(&args.device)?;
    tch::set_num_threads(config.selfplay.torch_threads);
    let mut a = Network::load(&args.a, &config.network, device)?;
    let mut b = Network::load(&args.b, &config.network, device)?;
    let p = &config.selfplay;
    let r = play_match(
        &mut a,
        &mut b,
        p.variant,
        args.games,
        (args.sims, args.sims),
        &config.search,
        p.max_actions,
        args.seed,
    );
    let n = args.games as f64;
    let score = (r.a_wins as f64 + 0.5 * r.draws as f64) / n;
    let margin = 1.96 * (score * (1.0 - score) / n).sqrt();
    println!("A {} wins, B {} wins, {} drawn by the length cap", r.a_wins, r.b_wins, r.draws);
    println!("A scores {:.1}% ± {:.1}% (95%)", 100.0 * score, 100.0 * margin);
    Ok(())
}

//! `gipf engine`: the line protocol of `gipf::engine` on standard input and output.

use std::path::PathBuf;

use anyhow::Result;
use gipf::config::Config;
use gipf::engine::Engine;
use gipf::net::parse_device;
use gipf::players::{budget_from_options, Player, PlayerSpec};
use gipf::rules::Variant;

/// Who plays for the program: a checkpoint or a baseline.
#[derive(clap::Args)]
pub struct PlayerArgs {
    /// A checkpoint's weights (models/step-NNNNNNNN.safetensors, its .json
    /// beside it), or a models folder; without it or --player, the reference
    /// model shipped with the program.
    #[arg(long, conflicts_with = "player")]
    model: Option<PathBuf>,
    /// A baseline instead: random, greedy, uct:N, alphabeta:D or alphabeta:MSms.
    #[arg(long)]
    player: Option<String>,
    /// Simulations per action of the checkpoint.
    #[arg(long, default_value_t = 200)]
    sims: u32,
    /// Time per action instead of simulations, in milliseconds.
    #[arg(long, value_name = "MS")]
    movetime: Option<u64>,
    /// Search settings from this config.
    #[arg(long, default_value = "configs/cpu.toml")]
    config: PathBuf,
    /// auto, cpu, cuda or cuda:N.
    #[arg(long, default_value = "auto")]
    device: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

impl PlayerArgs {
    /// The player and its name.
    pub fn build(&self) -> Result<(Box<dyn Player>, String)> {
        let budget = budget_from_options(self.sims, self.movetime)?;
        let spec = match (&self.model, &self.player) {
            (Some(model), _) => PlayerSpec::parse(&model.to_string_lossy(), budget)?,
            (None, Some(player)) => PlayerSpec::parse(player, budget)?,
            // No one named: the reference model shipped with the program.
            (None, None) => PlayerSpec::parse(gipf::checkpoint::REFERENCE, budget)?,
        };
        let config = Config::load(&self.config)?;
        tch::set_num_threads(config.play.torch_threads);
        let player = spec.build(parse_device(&self.device)?, config.play.inference(), &config.search, self.seed)?;
        Ok((player, spec.name()))
    }
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    player: PlayerArgs,
    /// The variant of the first game.
    #[arg(long, default_value = "standard")]
    variant: Variant,
}

pub fn run(args: Args) -> Result<()> {
    let (player, name) = args.player.build()?;
    let _guard = tch::no_grad_guard();
    let mut engine = Engine::new(player, name, args.variant);
    engine.serve(std::io::stdin().lock(), std::io::stdout().lock())?;
    Ok(())
}
